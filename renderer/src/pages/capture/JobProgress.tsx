/**
 * A capture processing job as the Process and Record tabs show it: one progress bar per stage
 * (open the videos, 2D pose per camera, triangulate, angles), Cancel while it runs, the link to the
 * results when done, and which stage failed and why (the recording is kept). `useCaptureJob` polls
 * the running job; `FramesInput` / `maxFrames` are the "first N frames" field both tabs offer, and
 * `CrossCheckInput` / `crossCheck` the second-model cross-check option.
 */
import { useCallback, useEffect, useState } from 'react';
import type { CaptureJobView } from '../../../../models/contract';
import { CROSS_CHECK_COST_FACTOR, CROSS_CHECK_MODEL } from '../../../../models/capture/quality';
import { call } from '../../bridge';
import { href } from '../../router';

/** Poll interval of a running job (ms). */
const POLL_MS = 250;

/**
 * The job the page started: polled while it runs; `onSettled` runs when it stops running
 * (complete, failed or cancelled), e.g. to reload the recordings.
 */
export function useCaptureJob(onSettled?: () => void): {
  job: CaptureJobView | null;
  setJob: (j: CaptureJobView | null) => void;
  cancel: () => void;
} {
  const [job, setJob] = useState<CaptureJobView | null>(null);
  const running = job?.status === 'running';
  const jobId = job?.id;
  useEffect(() => {
    if (!running || !jobId) return;
    let live = true;
    const t = setInterval(() => {
      void call('capture.job', { job_id: jobId }).then((j) => {
        if (!live) return;
        setJob(j);
        if (j.status !== 'running') onSettled?.();
      });
    }, POLL_MS);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [running, jobId, onSettled]);
  const cancel = useCallback(() => {
    if (!jobId) return;
    void call('capture.cancel', { job_id: jobId }).then((j) => {
      setJob(j);
      onSettled?.();
    });
  }, [jobId, onSettled]);
  return { job, setJob, cancel };
}

/** `{ max_frames }` for a positive whole number typed in the Frames field, else nothing (all frames). */
export function maxFrames(frames: string): { max_frames?: number } {
  const n = Number(frames);
  return frames && Number.isInteger(n) && n > 0 ? { max_frames: n } : {};
}

/** "Process only the first N frames" (empty: all). */
export function FramesInput({ value, onChange }: { value: string; onChange: (v: string) => void }) {
  return (
    <label>
      Frames
      <input name="max_frames" type="number" min={1} placeholder="all" value={value} onChange={(e) => onChange(e.target.value)} className="narrow" />
    </label>
  );
}

/** `{ cross_check }` with the app's second model when the option is ticked (the default for videos), else nothing (off: the readings then say `not_cross_checked`). */
export function crossCheck(on: boolean): { cross_check?: typeof CROSS_CHECK_MODEL } {
  return on ? { cross_check: CROSS_CHECK_MODEL } : {};
}

/**
 * "Cross-check with a second model": runs a second 2D model on the same video frames; each reading
 * then says how far the two models' angles differ (the `model_disagreement` condition on the
 * results). Ticked by default (the callers' state starts true); unticked, every reading says
 * `not_cross_checked`. Only for 2D pose from the videos; the cost factor is measured (BENCHMARKS.md).
 */
export function CrossCheckInput({ checked, onChange, disabled }: { checked: boolean; onChange: (v: boolean) => void; disabled?: boolean }) {
  return (
    <label
      className="check"
      title="A second pose model runs on the same frames; each angle then shows how far the two models differ. Untick to process faster: the angles then say they were not cross-checked"
    >
      <input type="checkbox" name="cross_check" checked={checked && !disabled} disabled={disabled} onChange={(e) => onChange(e.target.checked)} />
      Cross-check with a second model (about {CROSS_CHECK_COST_FACTOR}× slower)
    </label>
  );
}

/** One job's stages as progress bars, with Cancel while it runs. */
export function JobProgress({ job, onCancel }: { job: CaptureJobView; onCancel: () => void }) {
  const failedStage = job.error ? job.stages.find((s) => s.name === job.error!.stage) : undefined;
  return (
    <section className="card job" data-job={job.id} data-job-status={job.status} aria-live="polite">
      <header className="card-head">
        <h3>Processing</h3>
        {job.status === 'running' ? (
          <button type="button" onClick={onCancel} data-action="cancel-job">
            Cancel
          </button>
        ) : null}
      </header>
      <ol className="stages">
        {job.stages.map((s) => (
          <li key={s.name} data-stage={s.name} data-done={s.done >= s.total ? 'true' : 'false'}>
            <label>
              <span>{s.label}</span>
              <progress max={s.total} value={s.done} aria-label={s.label} />
              <span className="small muted">
                {s.total > 1 ? `${s.done}/${s.total} frames` : s.done >= s.total ? 'done' : job.status === 'running' ? '…' : ''}
              </span>
            </label>
          </li>
        ))}
      </ol>
      {job.status === 'complete' && job.session_id ? (
        <p className="ok-note" role="status">
          Done in {job.seconds?.toFixed(1)} s. <a href={href({ page: 'capture', tab: 'results', id: job.session_id })}>View the results</a>
        </p>
      ) : null}
      {job.status === 'cancelled' ? (
        <p className="muted" role="status">
          Cancelled. The recording is kept; process it again when you are ready.
        </p>
      ) : null}
      {job.status === 'failed' && job.error ? (
        <div className="error-note" role="alert" data-error-code={job.error.code} data-failed-stage={job.error.stage}>
          <strong>Failed at “{failedStage?.label ?? job.error.stage}”</strong>
          <p>{job.error.message}</p>
          <p className="small">The recording is kept: fix what the message says and process it again.</p>
        </div>
      ) : null}
    </section>
  );
}
