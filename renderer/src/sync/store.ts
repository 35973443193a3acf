/**
 * The device's sync status for the app shell (zustand): fed by the `sync.events` stream (the
 * current status at once, then each change), reconnecting after a dropped stream, and refreshed
 * on demand (after "Sync now", a discard or an enrolment).
 */
import { create } from 'zustand';
import type { DeviceSyncStatus } from '../../../models/sync';
import { bridge, request } from '../bridge';

export interface SyncState {
  /** Null until the first status arrives. */
  status: DeviceSyncStatus | null;
  set(s: DeviceSyncStatus): void;
  refresh(): Promise<void>;
}

/** The sync status store. */
export const useSync = create<SyncState>((set) => ({
  status: null,
  set: (s) => set({ status: s }),
  async refresh() {
    const r = await request('sync.status', {});
    if (r.ok) set({ status: r.value });
  },
}));

/**
 * Follow the status stream while signed in; returns the function that stops following. A stream
 * that ends (host restarted, connection dropped) is reopened after `retryMs`.
 */
export function followSyncStatus(retryMs = 3000): () => void {
  let stopped = false;
  let cancel: (() => void) | null = null;
  let timer: ReturnType<typeof setTimeout> | null = null;
  const open = () => {
    if (stopped) return;
    cancel = bridge.subscribe(
      'sync.events',
      {},
      (s) => useSync.getState().set(s),
      (error) => {
        cancel = null;
        if (stopped || error?.code === 'Unauthenticated') return;
        timer = setTimeout(open, retryMs);
      },
    );
  };
  open();
  return () => {
    stopped = true;
    if (timer) clearTimeout(timer);
    cancel?.();
  };
}

/** Plain words for a rejection reason (models/sync.ts RejectionReason). */
export const REASON_TEXT: Readonly<Record<string, { title: string; help: string }>> = {
  stale: {
    title: 'Changed at HQ meanwhile',
    help: 'Someone changed this record at HQ after you did. Nothing of your change was written; the record now shows HQ’s values.',
  },
  forbidden: {
    title: 'Not allowed any more',
    help: 'HQ refused it for your role as it is now (your role or the account may have changed while this device was offline).',
  },
  not_found: { title: 'Record no longer there', help: 'A record this change needs was removed at HQ, or is outside what your role can see.' },
  validation: { title: 'A value was refused', help: 'HQ found a value out of bounds or inconsistent with the stored records.' },
  policy: { title: 'Needs approval', help: 'The club’s policy refused it, or it needs an owner’s approval it did not carry.' },
  approval_unverified: {
    title: 'Owner approval not verified',
    help: 'It needs an owner’s approval, and HQ could not verify that the owner gave it: it was approved on a device not signed in to HQ as that owner. Re-plan it and have the owner approve it on a device signed in to HQ as themselves.',
  },
  signoff_unverified: {
    title: 'Sign-off not verified',
    help: 'HQ could not verify that the person this RTP sign-off names made it: it was made on a shared device where they are not signed in to HQ as themselves (a PIN checked on the device is not proof). Discard it, have the signer sign in to HQ as themselves on this device (Settings → Sync), and sign off again.',
  },
  author_unverified: {
    title: 'Author not verified',
    help: 'HQ could not verify that the person this change names made it: it was made on a shared device where they are not signed in to HQ as themselves, and the device’s own user could not have made it (a PIN checked on the device is not proof). Discard it, have its author sign in to HQ as themselves on this device (Settings → Sync), and make it again.',
  },
  idempotency_mismatch: { title: 'Duplicate change id', help: 'HQ already holds a different change with this id. Re-plan it as a new change.' },
};
