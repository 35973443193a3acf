/**
 * The always-visible sync indicator in the app shell: online or offline, pending uploads,
 * conflicts and the last successful sync. It links to the Sync page (conflicts first).
 */
import { useEffect, useState } from 'react';
import type { DeviceSyncStatus } from '../../../models/sync';
import { formatDateTime } from '../format';
import { href } from '../router';
import { useSync } from './store';

/** "5 min ago", "just now", else the date and time. */
export function sinceText(iso: string | null, now = Date.now()): string {
  if (!iso) return 'never';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 45) return 'just now';
  if (s < 3600) return `${Math.round(s / 60)} min ago`;
  if (s < 86_400) return `${Math.round(s / 3600)} h ago`;
  return formatDateTime(iso);
}

function stateOf(s: DeviceSyncStatus): 'local' | 'online' | 'offline' | 'stopped' {
  if (!s.enrolled) return 'local';
  if (s.last_error?.code === 'Unauthenticated') return 'stopped';
  return s.online ? 'online' : 'offline';
}

const STATE_TEXT = { local: 'Not synced', online: 'Online', offline: 'Offline', stopped: 'Sync stopped' } as const;

export function SyncIndicator() {
  const s = useSync((x) => x.status);
  // "Synced 3 min ago" ages while nothing changes.
  const [, setTick] = useState(0);
  useEffect(() => {
    const t = setInterval(() => setTick((n) => n + 1), 30_000);
    return () => clearInterval(t);
  }, []);
  if (!s) return null;
  const state = stateOf(s);
  const title =
    state === 'local'
      ? 'This device is not enrolled with an HQ server: records stay on this device.'
      : state === 'stopped'
        ? `HQ refused this device: ${s.last_error?.message ?? ''}`
        : `${s.hq_url ?? 'HQ'} — ${s.last_error ? `last problem: ${s.last_error.message}` : 'no problems'}`;
  return (
    <a
      className={`sync-indicator ${state}`}
      href={href({ page: 'sync' })}
      data-sync-indicator={state}
      data-pending={s.pending_uploads}
      data-conflicts={s.conflicts}
      title={title}
      aria-label={`Sync: ${STATE_TEXT[state]}, ${s.pending_uploads} pending, ${s.conflicts} conflicts. Open the sync page.`}
    >
      <span className="sync-line">
        <span className="dot" aria-hidden="true" />
        <strong>{STATE_TEXT[state]}</strong>
        {s.syncing ? <span className="small"> · syncing…</span> : null}
      </span>
      {s.enrolled ? (
        <>
          <span className="sync-line small">
            <span data-count="pending">{s.pending_uploads} pending</span>
            {' · '}
            <span data-count="conflicts" className={s.conflicts > 0 ? 'sync-conflicts' : undefined}>
              {s.conflicts} {s.conflicts === 1 ? 'conflict' : 'conflicts'}
            </span>
          </span>
          <span className="sync-line small" data-last-sync={s.last_synced_at ?? ''}>
            Synced {sinceText(s.last_synced_at)}
          </span>
        </>
      ) : (
        <span className="sync-line small">Records stay on this device</span>
      )}
    </a>
  );
}
