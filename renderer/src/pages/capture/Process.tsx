/**
 * Process a recorded trial: the recordings of the club, each with a Process button; a running job
 * shows one progress bar per stage (open the videos, 2D pose per camera, synchronise and
 * triangulate, joint angles) and can be cancelled; a failure says which stage failed and why, and
 * the recording stays to be processed again. A trial recorded elsewhere can be imported by folder.
 * The work runs in a separate process in main (main/capture/workspace.ts), never in this page.
 */
import { useEffect, useState } from 'react';
import type { CaptureJobView, CaptureRecordingView } from '../../../../models/contract';
import { CAPTURE_TESTS } from '../../../../models/capture/series';
import { CallError, call } from '../../bridge';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { formatDateTime, humanize } from '../../format';
import { href } from '../../router';
import { TEST_LABEL } from './labels';
import type { ErrorPayload } from '../../../../models/errors';

/** Poll interval of a running job (ms). */
const POLL_MS = 250;

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

function ImportForm({ athletes, onDone }: { athletes: { id: string; name: string }[]; onDone: () => void }) {
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [busy, setBusy] = useState(false);
  return (
    <details className="card">
      <summary>Import a trial recorded elsewhere</summary>
      <form
        className="capture-form"
        aria-label="Import a trial"
        onSubmit={(e) => {
          e.preventDefault();
          const f = new FormData(e.currentTarget);
          setBusy(true);
          setError(null);
          call('capture.importTrial', {
            trial_dir: String(f.get('trial_dir') ?? ''),
            calibration_path: String(f.get('calibration_path') ?? ''),
            athlete_id: String(f.get('athlete_id') ?? ''),
            test: String(f.get('test')) as (typeof CAPTURE_TESTS)[number],
          }).then(
            () => {
              setBusy(false);
              onDone();
            },
            (err: unknown) => {
              setBusy(false);
              setError(err instanceof CallError ? err.payload : { code: 'Internal', message: String(err) });
            },
          );
        }}
      >
        <label>
          Trial folder (holds videos/, optionally pose-associated/)
          <input name="trial_dir" required />
        </label>
        <label>
          Calibration file (TOML)
          <input name="calibration_path" required />
        </label>
        <label>
          Athlete
          <select name="athlete_id" required>
            {athletes.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Test
          <select name="test" defaultValue="single_leg_squat">
            {CAPTURE_TESTS.map((t) => (
              <option key={t} value={t}>
                {TEST_LABEL[t]}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={busy}>
          Import
        </button>
        {error ? <ErrorNote error={error} /> : null}
      </form>
    </details>
  );
}

function RecordingRow({ r, athlete, onJob }: { r: CaptureRecordingView; athlete: string; onJob: (j: CaptureJobView) => void }) {
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [frames, setFrames] = useState('');
  const [input, setInput] = useState<'video' | 'keypoints'>(r.videos.length ? 'video' : 'keypoints');
  return (
    <li className="card recording" data-recording={r.id} data-recording-status={r.status}>
      <div className="recording-head">
        <strong>{athlete}</strong> · {TEST_LABEL[r.test]} · {formatDateTime(r.recorded_at)}
        <div className="muted small">
          {r.cameras.length} cameras ({r.cameras.join(', ')}) · {r.videos.length} videos{r.has_keypoints ? ' · 2D keypoint files' : ''} · {humanize(r.origin)} ·{' '}
          {humanize(r.status)}
          {r.session_id ? (
            <>
              {' · '}
              <a href={href({ page: 'capture', tab: 'results', id: r.session_id })}>results</a>
            </>
          ) : null}
        </div>
        {r.last_error ? (
          <div className="small warn-text" data-last-error={r.last_error.stage}>
            Last attempt failed at {r.last_error.stage}: {r.last_error.message}
          </div>
        ) : null}
      </div>
      <form
        className="process-form"
        aria-label={`Process recording of ${athlete}`}
        onSubmit={(e) => {
          e.preventDefault();
          setError(null);
          const n = Number(frames);
          call('capture.process', { recording_id: r.id, input, ...(frames && n > 0 ? { max_frames: n } : {}) }).then(onJob, (err: unknown) =>
            setError(err instanceof CallError ? err.payload : { code: 'Internal', message: String(err) }),
          );
        }}
      >
        {r.videos.length && r.has_keypoints ? (
          <label>
            2D pose from
            <select value={input} onChange={(e) => setInput(e.target.value as 'video' | 'keypoints')} name="input">
              <option value="video">the videos</option>
              <option value="keypoints">the keypoint files</option>
            </select>
          </label>
        ) : null}
        <label>
          Frames
          <input name="max_frames" type="number" min={1} placeholder="all" value={frames} onChange={(e) => setFrames(e.target.value)} className="narrow" />
        </label>
        <button type="submit" disabled={r.status === 'processing'} data-action="process">
          {r.status === 'processed' || r.status === 'failed' ? 'Process again' : 'Process'}
        </button>
      </form>
      {error ? <ErrorNote error={error} /> : null}
    </li>
  );
}

export function ProcessView({ onState, canRun }: { onState: (s: 'loading' | 'ready' | 'error') => void; canRun: boolean }) {
  const data = useLoad(async () => {
    const [r, a] = await Promise.all([call('capture.recordings', {}), call('athletes.list', { status: 'all', limit: 5000 })]);
    return { recordings: r.recordings, athletes: a.athletes.map((x) => ({ id: x.id, name: x.name })) };
  }, 'recordings');
  const [job, setJob] = useState<CaptureJobView | null>(null);
  useEffect(() => onState(data.state), [data.state, onState]);
  const running = job?.status === 'running';
  const jobId = job?.id;
  const reload = data.reload;
  useEffect(() => {
    if (!running || !jobId) return;
    let live = true;
    const t = setInterval(() => {
      void call('capture.job', { job_id: jobId }).then((j) => {
        if (!live) return;
        setJob(j);
        if (j.status !== 'running') reload();
      });
    }, POLL_MS);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [running, jobId, reload]);
  if (!canRun) return <p className="muted">Processing needs the capture.run permission.</p>;
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  const names = new Map(data.data.athletes.map((a) => [a.id, a.name]));
  return (
    <div className="stack">
      {job ? (
        <JobProgress
          job={job}
          onCancel={() => {
            void call('capture.cancel', { job_id: job.id }).then((j) => {
              setJob(j);
              data.reload();
            });
          }}
        />
      ) : null}
      <h2>Recordings</h2>
      {data.data.recordings.length === 0 ? <p className="muted">No recordings yet: record a trial, or import one below.</p> : null}
      <ul className="plain-list stack">
        {data.data.recordings.map((r) => (
          <RecordingRow key={r.id} r={r} athlete={names.get(r.athlete_id) ?? 'Athlete'} onJob={setJob} />
        ))}
      </ul>
      <ImportForm athletes={data.data.athletes} onDone={data.reload} />
    </div>
  );
}
