/**
 * Approvals (kinetix.md §3): the confirm dialogs a run waits on. A write's dialog is pending
 * until its own user approves (bound to the arguments hash and the changeset's content hash) or
 * declines, the confirm wait runs out (10 minutes), the user presses Stop, or the change is
 * approved or declined in the app's proposals list.
 */
import { Conflict, Forbidden, NotFound } from '../../models/errors';
import { findUserById } from '../data/identity';
import * as K from '../data/kinetix';
import type { RunRecorder } from './recording';
import type { ActiveRun, Decision, HarnessDeps } from './run';

interface PendingConfirm {
  toolCallId: string;
  run: ActiveRun;
  argsHash: string;
  /** Content hash of the proposed changeset shown in the dialog (null for a write without one). */
  contentHash: string | null;
  /** The stored proposal waiting on this dialog (null for a write without a changeset). */
  changesetId: string | null;
  resolve: (d: { decision: Decision; approverId?: string }) => void;
}

/** The pending confirm dialogs of this process. */
export class Approvals {
  private readonly pending = new Map<string, PendingConfirm>();

  constructor(
    private readonly d: HarnessDeps,
    private readonly rec: RunRecorder,
  ) {}

  /**
   * Approve or decline a pending write. Accepted only from the run's own user in the run's org,
   * for this tool-call id; an approval must carry the `argsHash` shown in `confirm_required`, and
   * when it carries a `contentHash` that must be the proposed changeset's (the apply is bound to
   * the stored proposal's content hash either way).
   * @throws NotFound (no such pending call for this user), Conflict (already decided, or the
   *   arguments changed), Forbidden (caller deactivated)
   */
  confirm(userId: string, toolCallId: string, decision: { approve: boolean; argsHash?: string; contentHash?: string }): { status: 'accepted' } {
    const user = findUserById(this.d.db, userId);
    const p = this.pending.get(toolCallId);
    if (!p) {
      const row = K.getToolCall(this.d.db, toolCallId);
      if (row && user && row.user_id === user.id && row.org_id === user.org_id && row.status !== 'proposed')
        throw new Conflict(`This action was already ${row.status}.`);
      throw new NotFound('Pending action');
    }
    if (!user || user.id !== p.run.userId || user.org_id !== p.run.orgId) {
      this.rec.trace(p.run, 'decision', { toolCallId, refused: 'confirm from another user or organisation' });
      throw new NotFound('Pending action');
    }
    if (!user.active) throw new Forbidden('Your account is deactivated.');
    if (decision.approve && decision.argsHash !== p.argsHash) {
      this.rec.trace(p.run, 'decision', { toolCallId, refused: 'argument hash mismatch' });
      throw new Conflict('The details of this action changed since they were shown; nothing ran. Review the action again.');
    }
    if (decision.approve && decision.contentHash !== undefined && decision.contentHash !== p.contentHash) {
      this.rec.trace(p.run, 'decision', { toolCallId, refused: 'changeset content hash mismatch' });
      throw new Conflict('This approval is for a different change than the one waiting; nothing ran. Review the action again.');
    }
    p.resolve({ decision: decision.approve ? 'approve' : 'decline', approverId: user.id });
    return { status: 'accepted' };
  }

  /** Wait for the decision on one dialog (timeout after the confirm limit; at once `stopped` if the run was already aborted). */
  wait(
    run: ActiveRun,
    toolCallId: string,
    argsHash: string,
    contentHash: string | null,
    changesetId: string | null = null,
  ): Promise<{ decision: Decision; approverId?: string }> {
    return new Promise((resolve) => {
      let settled = false;
      const timer = this.d.scheduler.setTimeout(() => finish({ decision: 'timeout' }), this.d.limits.confirmTimeoutMs);
      const finish = (d: { decision: Decision; approverId?: string }) => {
        if (settled) return;
        settled = true;
        this.d.scheduler.clearTimeout(timer);
        this.pending.delete(toolCallId);
        resolve(d);
      };
      this.pending.set(toolCallId, { toolCallId, run, argsHash, contentHash, changesetId, resolve: finish });
      if (run.abort.signal.aborted) finish({ decision: 'stopped' });
    });
  }

  /** Every dialog of `run` resolves as `stopped` (the user pressed Stop). */
  stopRun(run: ActiveRun): void {
    for (const p of this.pending.values()) if (p.run === run) p.resolve({ decision: 'stopped' });
  }

  /** A dialog waiting on the proposal `changesetId` learns it was decided in the app. */
  decidedInApp(changesetId: string, decision: 'approve' | 'decline', approverId: string): void {
    for (const p of this.pending.values()) if (p.changesetId === changesetId) p.resolve({ decision, approverId });
  }
}
