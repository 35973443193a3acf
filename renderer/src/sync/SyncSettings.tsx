/**
 * Settings → Sync: enrol this device with the club's HQ server (HQ address, email and PIN of an HQ
 * account and a one-time HQ sign-in code issued for it; PIN and code go to HQ once and are never
 * stored), and once enrolled: the device id, the HQ address, the last successful sync, the last
 * problem, and "Sync now". Then the signed-in user's own HQ sign-in on this device: whether they
 * have one (HQ needs it to verify the changes an owner approves and the RTP sign-offs given here on
 * a device someone else enrolled, and to issue sign-in codes), a PIN + code form to sign in, and
 * once signed in "Get a sign-in code for another device of mine" (SignInCode.tsx).
 */
import { useEffect, useState } from 'react';
import { hasPermission, NEEDS_OWNER_APPROVER } from '../../../models/roles';
import { SIGNOFF_PERMISSIONS } from '../../../models/policy';
import type { ErrorPayload } from '../../../models/errors';
import { CallError, call } from '../bridge';
import { ErrorNote } from '../components/Page';
import { formatDateTime } from '../format';
import { useSession } from '../store';
import { CODE_HINT, SelfSignInCode, SyncErrorNote } from './SignInCode';
import { useSync } from './store';

const errorOf = (e: unknown): ErrorPayload => (e instanceof CallError ? e.payload : { code: 'Internal', message: 'The request failed.' });

export function SyncSettings({ defaultEmail }: { defaultEmail?: string }) {
  const status = useSync((s) => s.status);
  const setStatus = useSync((s) => s.set);
  const [hqUrl, setHqUrl] = useState(status?.hq_url ?? '');
  const [email, setEmail] = useState(defaultEmail ?? '');
  const [pin, setPin] = useState('');
  const [code, setCode] = useState('');
  const [deviceName, setDeviceName] = useState('');
  const [busy, setBusy] = useState<'enrol' | 'sync' | null>(null);
  const [error, setError] = useState<{ from: 'enrol' | 'sync'; e: ErrorPayload } | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [reenrol, setReenrol] = useState(false);

  async function enrol() {
    setBusy('enrol');
    setError(null);
    setNote(null);
    try {
      const s = await call('sync.enrol', {
        hqUrl: hqUrl.trim(),
        email: email.trim(),
        pin,
        code: code.trim(),
        ...(deviceName.trim() ? { deviceName: deviceName.trim() } : {}),
      });
      setStatus(s);
      setReenrol(false);
      setCode('');
      setNote('This device is enrolled; it syncs in the background from now on.');
    } catch (e) {
      setError({ from: 'enrol', e: errorOf(e) });
    } finally {
      setPin('');
      setBusy(null);
    }
  }
  async function syncNow() {
    setBusy('sync');
    setError(null);
    setNote(null);
    try {
      setStatus(await call('sync.now', {}));
      setNote('Synced with HQ.');
    } catch (e) {
      setError({ from: 'sync', e: errorOf(e) });
      void useSync.getState().refresh();
    } finally {
      setBusy(null);
    }
  }

  const enrolled = status?.enrolled === true;
  const role = useSession((s) => s.me?.role);
  const needsHqSignIn = approvesHere(role);
  return (
    <section className="card" aria-labelledby="sync-settings" data-sync-settings={enrolled ? 'enrolled' : 'local'}>
      <h2 id="sync-settings">Sync</h2>
      {error?.from === 'enrol' ? <SyncErrorNote error={error.e} unauthenticated="HQ did not accept the email, PIN or sign-in code" /> : null}
      {error?.from === 'sync' ? <ErrorNote error={error.e} /> : null}
      {note ? (
        <p className="ok-note" role="status">
          {note}
        </p>
      ) : null}
      {enrolled && status ? (
        <>
          <dl className="facts">
            <dt>HQ server</dt>
            <dd data-field="hq-url">{status.hq_url}</dd>
            <dt>Device id</dt>
            <dd>
              <code data-field="device-id">{status.device_id}</code>
            </dd>
            <dt>Connection</dt>
            <dd>{status.online ? 'Online' : 'Offline (changes wait on this device)'}</dd>
            <dt>Last successful sync</dt>
            <dd data-field="last-sync">{status.last_synced_at ? formatDateTime(status.last_synced_at) : 'Not yet'}</dd>
            <dt>Waiting to upload</dt>
            <dd>{status.pending_uploads}</dd>
            <dt>Conflicts</dt>
            <dd>
              {status.conflicts} {status.conflicts > 0 ? <a href="#/sync">Review them</a> : null}
            </dd>
            {status.last_error ? (
              <>
                <dt>Last problem</dt>
                <dd data-field="last-error" data-code={status.last_error.code}>
                  {status.last_error.message}
                </dd>
              </>
            ) : null}
          </dl>
          <div className="row-actions">
            <button type="button" className="primary" data-action="sync-now" disabled={busy !== null} onClick={() => void syncNow()}>
              {busy === 'sync' ? 'Syncing…' : 'Sync now'}
            </button>
            {!reenrol ? (
              <button type="button" onClick={() => setReenrol(true)}>
                Enrol again…
              </button>
            ) : null}
          </div>
          {/* Hidden while enrolling again: that replaces this enrolment (and the HQ sign-ins made on it). */}
          {!reenrol ? <OwnerHqSignIn approves={needsHqSignIn} /> : null}
        </>
      ) : (
        <p className="small muted">
          This device keeps its records locally. Enrol it with your club&apos;s HQ server to upload what is recorded here and receive everyone else&apos;s
          changes. Sign in with an HQ account&apos;s email and PIN: the device then holds what that account may see (a staff account: the whole club, so anyone
          in the club can sign in here offline; an athlete account: that athlete&apos;s records only). HQ also asks for a one-time sign-in code issued for that
          account: a club owner or administrator gets one in Settings → Users, and you can get one for yourself on a device where you are signed in to HQ.
        </p>
      )}
      {reenrol ? <h3>Enrol this device again</h3> : null}
      {!enrolled || reenrol ? (
        <form
          className="filters"
          data-form="sync-enrol"
          onSubmit={(e) => {
            e.preventDefault();
            void enrol();
          }}
        >
          <label>
            HQ address
            <input type="url" name="hqUrl" required placeholder="http://hq.local:5180" value={hqUrl} onChange={(e) => setHqUrl(e.target.value)} />
          </label>
          <label>
            Email
            <input type="email" name="email" required autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} />
          </label>
          <label>
            PIN
            <input type="password" name="pin" required inputMode="numeric" autoComplete="off" value={pin} onChange={(e) => setPin(e.target.value)} />
          </label>
          <CodeField name="code" value={code} onChange={setCode} />
          <label>
            Device name <span className="small muted">(optional)</span>
            <input
              type="text"
              name="deviceName"
              maxLength={100}
              placeholder="Pitch laptop"
              value={deviceName}
              onChange={(e) => setDeviceName(e.target.value)}
            />
          </label>
          <div className="row-actions">
            <button type="submit" className="primary" data-action="enrol" disabled={busy !== null || !hqUrl.trim() || !email.trim() || !pin || !code.trim()}>
              {busy === 'enrol' ? 'Enrolling…' : 'Enrol this device'}
            </button>
            {reenrol ? (
              <button type="button" onClick={() => setReenrol(false)}>
                Cancel
              </button>
            ) : null}
          </div>
        </form>
      ) : null}
    </section>
  );
}

/**
 * Owners approve changes; sign-off holders sign off RTP: on a shared device HQ verifies either only
 * with the user's own HQ sign-in.
 */
function approvesHere(role: string | undefined): boolean {
  return role === NEEDS_OWNER_APPROVER || (!!role && Object.values(SIGNOFF_PERMISSIONS).some((p) => hasPermission(role, p)));
}

/**
 * The Sync page's card for an enrolled device's users who do not see Settings → Sync (clinicians,
 * athletes): their own HQ sign-in here (PIN + code), and once signed in a code for another device of theirs.
 */
export function HqSignInCard() {
  const role = useSession((s) => s.me?.role);
  return (
    <section className="card" aria-label="Your HQ sign-in" data-hq-signin-card>
      <OwnerHqSignIn approves={approvesHere(role)} />
    </section>
  );
}

/**
 * The signed-in user's own HQ sign-in on this device. Without it HQ cannot verify an owner approval
 * or an RTP sign-off given here on a device someone else enrolled (it rejects the change: a Sync
 * conflict), and this user cannot get HQ sign-in codes from here. Signing in takes their PIN and a
 * one-time code issued for their account; once signed in they can get a code for another device of
 * theirs. `approves`: the role approves changes or signs off RTP (the text says why it matters).
 */
function OwnerHqSignIn({ approves }: { approves: boolean }) {
  const me = useSession((s) => s.me);
  const [state, setState] = useState<{ signed_in: boolean; signed_in_at: string | null; enrolled_here?: boolean } | null>(null);
  const [pin, setPin] = useState('');
  const [code, setCode] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ErrorPayload | null>(null);
  useEffect(() => {
    call('sync.hqSignIn', {}).then(setState, (e: unknown) => setError(errorOf(e)));
  }, []);
  async function signIn() {
    setBusy(true);
    setError(null);
    try {
      setState(await call('sync.signInToHq', { pin, code: code.trim() }));
      setCode('');
    } catch (e) {
      setError(errorOf(e));
    } finally {
      setPin('');
      setBusy(false);
    }
  }
  if (!state) return error ? <ErrorNote error={error} /> : null;
  return (
    <div data-owner-hq-signin={state.signed_in ? 'yes' : 'no'}>
      <h3>Your HQ sign-in on this device</h3>
      {state.signed_in ? (
        <>
          <p className="small">
            You are signed in to HQ as yourself on this device{state.signed_in_at ? ` (since ${formatDateTime(state.signed_in_at)})` : ''}
            {approves ? ': HQ can verify the changes you approve and the RTP sign-offs you give here, even offline.' : '.'}{' '}
            {state.enrolled_here
              ? 'To enrol another device of yours, or sign in to HQ on a shared laptop, get a one-time sign-in code here and enter it there with your email and PIN.'
              : 'Sign-in codes for your other devices come from a device enrolled with your own account, or from a club owner or administrator: not from a device someone else enrolled.'}
          </p>
          {me && state.enrolled_here ? <SelfSignInCode userId={me.user_id} /> : null}
        </>
      ) : (
        <form
          className="filters"
          data-form="owner-hq-signin"
          onSubmit={(e) => {
            e.preventDefault();
            void signIn();
          }}
        >
          <p className="small muted">
            {approves
              ? 'HQ applies a change that needs an owner, or an RTP sign-off, only when it can verify that you gave it. On this device it cannot yet: sign in to HQ as yourself once, while online. Until then, changes you approve and sign-offs you give here are refused by HQ and appear under Sync conflicts. '
              : 'Sign in to HQ as yourself once, while online, to get HQ sign-in codes from this device. '}
            Your PIN and a one-time sign-in code issued for your account go to HQ and are not stored.
          </p>
          {error ? <SyncErrorNote error={error} unauthenticated="HQ did not accept your PIN or sign-in code" /> : null}
          <label>
            Your PIN
            <input type="password" name="ownerPin" required inputMode="numeric" autoComplete="off" value={pin} onChange={(e) => setPin(e.target.value)} />
          </label>
          <CodeField name="ownerCode" value={code} onChange={setCode} />
          <div className="row-actions">
            <button type="submit" data-action="owner-hq-signin" disabled={busy || !pin || !code.trim()}>
              {busy ? 'Signing in…' : 'Sign in to HQ as me'}
            </button>
          </div>
        </form>
      )}
    </div>
  );
}

/** The one-time HQ sign-in code input (enrol form, and the HQ sign-in form); `name` is the field's form name. */
function CodeField({ name, value, onChange }: { name: string; value: string; onChange(v: string): void }) {
  return (
    <label>
      Sign-in code <span className="small muted">({CODE_HINT})</span>
      <input
        type="text"
        name={name}
        required
        autoComplete="off"
        spellCheck={false}
        placeholder="XXXX-XXXX-XXXX"
        maxLength={64}
        value={value}
        onChange={(e) => onChange(e.target.value)}
      />
    </label>
  );
}
