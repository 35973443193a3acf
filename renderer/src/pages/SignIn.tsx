/** Sign-in: choose a local user of this installation, then enter that user's PIN. */
import { useMemo, useRef, useState } from 'react';
import type { SignInUser } from '../../../models/contract';
import type { ErrorPayload } from '../../../models/errors';
import { call } from '../bridge';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { useSession } from '../store';
import { roleLabel } from '../format';

export function SignIn() {
  const users = useLoad(() => call('session.users', {}), 'users');
  const signIn = useSession((s) => s.signIn);
  const [chosen, setChosen] = useState<string | null>(null);
  const [pin, setPin] = useState('');
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [busy, setBusy] = useState(false);
  const pinRef = useRef<HTMLInputElement>(null);

  const byOrg = useMemo(() => {
    const m = new Map<string, SignInUser[]>();
    for (const u of users.data?.users ?? []) m.set(u.org_name, [...(m.get(u.org_name) ?? []), u]);
    return [...m.entries()];
  }, [users.data]);
  const chosenUser = users.data?.users.find((u) => u.id === chosen) ?? null;

  async function submit(e: React.FormEvent) {
    e.preventDefault();
    if (!chosen || !pin) return;
    setBusy(true);
    const err = await signIn(chosen, pin);
    setBusy(false);
    if (err) {
      setError(err);
      setPin('');
      pinRef.current?.focus();
    }
  }

  return (
    <div className="signin-wrap">
      <Page page="signin" state={users.state} title="Sign in to Athlete Intelligence">
        {users.state === 'error' ? <ErrorNote error={users.error} /> : null}
        {users.state === 'ready' ? (
          <form className="signin" onSubmit={submit} aria-label="Sign in">
            <fieldset className="user-pick">
              <legend>Who are you?</legend>
              {byOrg.map(([org, list]) => (
                <div key={org} className="org-group">
                  <h2>{org}</h2>
                  <ul className="user-list">
                    {list.map((u) => (
                      <li key={u.id}>
                        <label className={`user-option${chosen === u.id ? ' selected' : ''}${u.has_pin ? '' : ' disabled'}`} data-email={u.email}>
                          <input
                            type="radio"
                            name="user"
                            value={u.id}
                            disabled={!u.has_pin}
                            checked={chosen === u.id}
                            onChange={() => {
                              setChosen(u.id);
                              setError(null);
                              setTimeout(() => pinRef.current?.focus(), 0);
                            }}
                          />
                          <span className="user-name">{u.display_name}</span>
                          <span className="user-role">
                            {roleLabel(u.role)}
                            {u.has_pin ? '' : ' · no PIN set'}
                          </span>
                        </label>
                      </li>
                    ))}
                  </ul>
                </div>
              ))}
            </fieldset>
            <div className="pin-box">
              <label htmlFor="pin">PIN{chosenUser ? ` for ${chosenUser.display_name}` : ''}</label>
              <input
                id="pin"
                ref={pinRef}
                type="password"
                inputMode="numeric"
                autoComplete="off"
                value={pin}
                onChange={(e) => setPin(e.target.value)}
                disabled={!chosen}
                maxLength={32}
              />
              <button type="submit" className="primary" disabled={!chosen || !pin || busy}>
                {busy ? 'Signing in…' : 'Sign in'}
              </button>
              {error ? <ErrorNote error={error} /> : null}
              <p className="muted small">PINs are stored only as salted hashes on this device.</p>
            </div>
          </form>
        ) : null}
      </Page>
    </div>
  );
}
