/** App-wide state (zustand): who is signed in, the org's people, and a status line. */
import { create } from 'zustand';
import type { Me } from '../../models/contract';
import type { ErrorPayload } from '../../models/errors';
import { onSessionEnded, request } from './bridge';

export interface SessionState {
  status: 'loading' | 'signedOut' | 'signedIn';
  me: Me | null;
  /** user id → display name and role (who signed, who changed). */
  people: Record<string, { display_name: string; role: string }>;
  /** Set when the host could not be reached at start, or when the session ended under the user (shown above sign-in). */
  startError: ErrorPayload | null;
  init(): Promise<void>;
  signIn(userId: string, pin: string): Promise<ErrorPayload | null>;
  signOut(): Promise<void>;
}

async function loadPeople(): Promise<SessionState['people']> {
  const r = await request('session.people', {});
  if (!r.ok) return {};
  return Object.fromEntries(r.value.people.map((p) => [p.id, { display_name: p.display_name, role: p.role }]));
}

/** The session store. */
export const useSession = create<SessionState>((set) => ({
  status: 'loading',
  me: null,
  people: {},
  startError: null,
  async init() {
    const r = await request('session.me', {});
    if (!r.ok) {
      set({ status: 'signedOut', me: null, startError: r.error });
      return;
    }
    if (r.value) set({ status: 'signedIn', me: r.value, people: await loadPeople(), startError: null });
    else set({ status: 'signedOut', me: null, startError: null });
  },
  async signIn(userId, pin) {
    const r = await request('session.signIn', { user_id: userId, pin });
    if (!r.ok) return r.error;
    set({ status: 'signedIn', me: r.value, people: await loadPeople(), startError: null });
    return null;
  },
  async signOut() {
    await request('session.signOut', {});
    set({ status: 'signedOut', me: null, people: {} });
    window.location.hash = '#/athletes';
  },
}));

// The host ended this window's session (the account changed, or it signed out elsewhere): back to
// sign-in with the host's reason, never the old user's shell.
onSessionEnded((error) => {
  if (useSession.getState().status === 'signedIn') useSession.setState({ status: 'signedOut', me: null, people: {}, startError: error });
});

/** Display name for a user id ("Unknown user" when not in this org). */
export function personName(people: SessionState['people'], id: string | null): string {
  if (!id) return '';
  return people[id]?.display_name ?? 'Unknown user';
}
