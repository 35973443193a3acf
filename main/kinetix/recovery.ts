/**
 * Recovery at start (kinetix.md §3): what a stopped process left in flight is settled, so no run
 * waits forever and nothing is half-applied.
 */
import { EventType } from '@ag-ui/core';
import type { Db } from '../data/db';
import * as K from '../data/kinetix';
import { pidAlive } from './limits';
import { expireProposal } from './proposals';
import type { Scheduler } from './scheduler';

/**
 * At start: runs left in flight by a stopped process become `interrupted`; their pending
 * confirmations `skipped`; a confirmed call is settled by whether its changeset committed (the
 * apply is one transaction, so nothing is ever half-applied). Runs of another live process on
 * the same database are left alone.
 */
export function recoverInterrupted(db: Db, scheduler: Scheduler): void {
  let rows: K.RunRow[];
  try {
    rows = K.inFlightRuns(db);
  } catch {
    return;
  }
  for (const r of rows) {
    if (r.host_pid !== process.pid && pidAlive(r.host_pid)) continue;
    const nowIso = new Date(scheduler.now()).toISOString();
    K.inTransaction(db, () => {
      const interrupted = { code: 'Interrupted', message: 'The app stopped before this action was decided; it did not run.' };
      for (const t of K.listToolCalls(db, r.id)) {
        if (t.status === 'proposed') {
          // A change waiting for an owner stays waiting in the app; any other open proposal is closed.
          if (t.changeset_id && K.changesetStatus(db, t.changeset_id) === 'needs_owner') continue;
          if (t.changeset_id) expireProposal(db, t.changeset_id, interrupted, nowIso);
          K.updateToolCall(db, t.id, { status: 'skipped', error_json: JSON.stringify(interrupted), updated_at: nowIso });
        } else if (t.status === 'confirmed') {
          const committed = t.changeset_id !== null && K.changesetExists(db, t.changeset_id);
          if (!committed && t.changeset_id)
            expireProposal(
              db,
              t.changeset_id,
              { code: 'Interrupted', message: 'The app stopped before this action was applied; nothing was changed.' },
              nowIso,
            );
          K.updateToolCall(
            db,
            t.id,
            committed
              ? { status: 'executed', updated_at: nowIso }
              : {
                  status: 'failed',
                  error_json: JSON.stringify({ code: 'Interrupted', message: 'The app stopped before this action was applied; nothing was changed.' }),
                  updated_at: nowIso,
                },
          );
        }
      }
      K.updateRun(db, r.id, {
        status: 'interrupted',
        finished_at: nowIso,
        error_code: 'Interrupted',
        error_message: 'The app stopped while this request was running.',
      });
      K.releaseRunLease(db, r.id);
      const seq = K.maxRunEventSeq(db, r.id) + 1;
      const ev = {
        type: EventType.RUN_ERROR,
        message: 'The app stopped while this request was running. Nothing was half-applied; ask again to continue.',
        code: 'Interrupted',
        timestamp: scheduler.now(),
      };
      K.insertRunEvent(db, { run_id: r.id, seq, type: ev.type, event_json: JSON.stringify(ev), created_at: nowIso });
      K.insertTrace(db, {
        run_id: r.id,
        seq: K.maxTraceSeq(db, r.id) + 1,
        kind: 'finish',
        data_json: JSON.stringify({ status: 'interrupted' }),
        created_at: nowIso,
      });
    });
  }
}
