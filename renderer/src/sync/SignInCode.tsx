/**
 * One-time HQ sign-in codes on the device side (issue 12, B3). A PIN is only the offline
 * credential here (every staff device holds the club's PIN hashes); signing anyone in to HQ —
 * enrolling a device, or "Sign in to HQ as me" on a shared laptop — also needs a code
 * `XXXX-XXXX-XXXX` that HQ issued for that account: single use, valid 24 hours.
 *
 * - {@link SelfSignInCode}: Settings → Sync, a code for another device of one's own.
 * - {@link SignInCodeDialog}: Settings → Users, a code for another account (user.manage; HQ applies
 *   the rule for setting that account's PIN and answers Forbidden with its reason).
 * - {@link SyncErrorNote}: the typed errors of these forms with a headline that says what failed
 *   (not enrolled, not signed in to HQ here, HQ unreachable, a wrong PIN or code), HQ's words under it.
 *
 * A code is shown once and kept only in this component's state: closing it forgets it.
 */
import { useState } from 'react';
import type { IssuedSignInCode } from '../../../models/contract';
import type { ErrorPayload } from '../../../models/errors';
import { CallError, call } from '../bridge';
import { FormDialog, useEntryForm } from '../components/Form';
import { formatDateTime } from '../format';

/** The field hint wherever a sign-in code is asked for. */
export const CODE_HINT = 'from a club owner or administrator';

const errorOf = (e: unknown): ErrorPayload => (e instanceof CallError ? e.payload : { code: 'Internal', message: 'The request failed.' });

/**
 * An error of a sync form with a headline for its code. `unauthenticated` is what a 401 means in
 * that form (a wrong PIN or code when signing in; no HQ sign-in here when asking for a code).
 */
export function SyncErrorNote({ error, unauthenticated }: { error: ErrorPayload; unauthenticated: string }) {
  const title =
    error.code === 'Unauthenticated'
      ? unauthenticated
      : error.code === 'NotConfigured'
        ? 'This device is not enrolled with HQ'
        : error.code === 'Unavailable'
          ? 'HQ cannot be reached'
          : error.code === 'Forbidden'
            ? 'HQ refused'
            : error.code === 'NotFound'
              ? 'Not found'
              : error.code === 'RateLimited'
                ? 'Too many attempts'
                : error.code === 'Validation'
                  ? 'Check the values'
                  : 'Something went wrong';
  return (
    <div className="error-note" role="alert" data-error-code={error.code}>
      <strong>{title}</strong>
      <p>{error.message}</p>
    </div>
  );
}

/** The issued code, its expiry and what to do with it; shown once. */
export function SignInCodeOnce({ issued, forSelf, onDone }: { issued: IssuedSignInCode; forSelf: boolean; onDone(): void }) {
  const who = forSelf ? 'you' : issued.user.display_name;
  return (
    <div className="field wide" data-signin-code-once data-user={issued.user.email}>
      <p role="status">
        <strong>{forSelf ? 'Your HQ sign-in code' : `For ${issued.user.email}`}</strong>, valid once until{' '}
        <span data-field="signin-code-expires">{formatDateTime(issued.expires_at)}</span>. It is shown only this once.
      </p>
      <output className="key-once" data-field="signin-code">
        {issued.code}
      </output>
      <p className="small">
        {forSelf
          ? 'On your other device, enter it with your email and PIN in Settings → Sync (Enrol this device, or Sign in to HQ as me).'
          : `Give it to ${who} in person: on their device they enter it with their email and PIN in Settings → Sync (Enrol this device, or Sign in to HQ as me).`}
      </p>
      <div className="form-actions">
        <button type="button" className="primary" data-action="signin-code-done" onClick={onDone} autoFocus>
          Done — close
        </button>
      </div>
    </div>
  );
}

/** Ask HQ for a code for `userId`; the state of one request. */
function useIssue(userId: string) {
  const [issued, setIssued] = useState<IssuedSignInCode | null>(null);
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [busy, setBusy] = useState(false);
  async function issue() {
    setBusy(true);
    setError(null);
    try {
      setIssued(await call('sync.enrolmentCode', { userId }));
    } catch (e) {
      setError(errorOf(e));
    } finally {
      setBusy(false);
    }
  }
  return { issued, error, busy, issue, clear: () => setIssued(null) };
}

const NOT_SIGNED_IN = 'You are not signed in to HQ on this device';

/** Settings → Sync: "Get a sign-in code for another device of mine". */
export function SelfSignInCode({ userId }: { userId: string }) {
  const { issued, error, busy, issue, clear } = useIssue(userId);
  return (
    <div data-self-signin-code={issued ? 'shown' : 'none'}>
      {error ? <SyncErrorNote error={error} unauthenticated={NOT_SIGNED_IN} /> : null}
      {issued ? (
        <SignInCodeOnce issued={issued} forSelf onDone={clear} />
      ) : (
        <div className="row-actions">
          <button type="button" data-action="self-signin-code" disabled={busy} onClick={() => void issue()}>
            {busy ? 'Asking HQ…' : 'Get a sign-in code for another device of mine'}
          </button>
        </div>
      )}
    </div>
  );
}

/**
 * Settings → Users: an HQ sign-in code for another account (user.manage), issued when the button
 * is pressed (never on opening), shown once with its expiry.
 */
export function SignInCodeDialog({ user, onClose }: { user: { id: string; display_name: string; email: string }; onClose(): void }) {
  const { issued, error, busy, issue } = useIssue(user.id);
  // A small local form (no changeset), with the same dialog markup and states as the others; the
  // error is shown by SyncErrorNote (a 401 here means no HQ sign-in on this device, not "signed out").
  const base = useEntryForm('user-signin-code');
  const form = { ...base, state: busy ? ('saving' as const) : ('idle' as const), error: null, issueFor: () => null };
  return (
    <FormDialog
      form={form}
      title={`HQ sign-in code for ${user.display_name}`}
      submitLabel="Get sign-in code"
      onSubmit={() => void issue()}
      onClose={onClose}
      hideActions={Boolean(issued)}
      intro={
        issued ? null : (
          <>
            <p className="small muted">
              {user.display_name} needs a one-time code, with their PIN, to enrol a device with HQ or sign in to HQ on a shared laptop. HQ issues it for their
              account only; it works once and expires after 24 hours.
            </p>
            {error ? <SyncErrorNote error={error} unauthenticated={NOT_SIGNED_IN} /> : null}
          </>
        )
      }
    >
      {issued ? <SignInCodeOnce issued={issued} forSelf={false} onDone={onClose} /> : null}
    </FormDialog>
  );
}
