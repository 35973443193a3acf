/**
 * Process a recorded trial: the recordings of the club, each with a Process button; a running job
 * shows one progress bar per stage (open the videos, 2D pose per camera, synchronise and
 * triangulate, joint angles) and can be cancelled; a failure says which stage failed and why, and
 * the recording stays to be processed again. A trial recorded elsewhere can be imported by folder.
 * A recording nobody has tapped offers "Tap the athlete" (the first frame of its first camera,
 * components in TapFrame.tsx): with others in view, an untapped trial's readings all fail
 * athlete_not_tapped; processing without a tap stays possible.
 * A video run is cross-checked by a second 2D model by default (each reading then says how far the two differ; unticked, each says it was not cross-checked).
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
import { CrossCheckInput, crossCheck, FramesInput, JobProgress, maxFrames, useCaptureJob } from './JobProgress';
import { TEST_LABEL } from './labels';
import { TapFrame } from './TapFrame';
import type { ErrorPayload } from '../../../../models/errors';

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
  // on by default: a reading from video is compared with a second model unless the user unticks it (README, "Second-model cross-check")
  const [cross, setCross] = useState(true);
  const [tap, setTap] = useState(r.tap);
  const [tapping, setTapping] = useState(false);
  return (
    <li className="card recording" data-recording={r.id} data-recording-status={r.status} data-tap-state={tap ? 'tapped' : 'not-tapped'}>
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
        {tap ? (
          <div className="small" data-athlete-tapped="true">
            Athlete tapped in {tap.camera} at ({Math.round(tap.x)}, {Math.round(tap.y)}) px.
          </div>
        ) : (
          <div className="small warn-text" data-athlete-tapped="false">
            Athlete not tapped: the largest person is taken; with others in view every reading fails.
          </div>
        )}
      </div>
      {tapping ? (
        <TapFrame
          recordingId={r.id}
          onTapped={(t) => {
            setTap({ camera: r.cameras[0]!, ...t });
            setTapping(false);
          }}
        />
      ) : null}
      <form
        className="process-form"
        aria-label={`Process recording of ${athlete}`}
        onSubmit={(e) => {
          e.preventDefault();
          setError(null);
          call('capture.process', { recording_id: r.id, input, ...maxFrames(frames), ...crossCheck(cross && input === 'video') }).then(onJob, (err: unknown) =>
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
        <FramesInput value={frames} onChange={setFrames} />
        {r.videos.length ? <CrossCheckInput checked={cross} onChange={setCross} disabled={input !== 'video'} /> : null}
        {!tapping ? (
          <button type="button" data-action="tap-athlete" onClick={() => setTapping(true)}>
            {tap ? 'Tap the athlete again' : 'Tap the athlete'}
          </button>
        ) : (
          <button type="button" onClick={() => setTapping(false)}>
            Close the frame
          </button>
        )}
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
  useEffect(() => onState(data.state), [data.state, onState]);
  const { job, setJob, cancel } = useCaptureJob(data.reload);
  if (!canRun) return <p className="muted">Processing needs the capture.run permission.</p>;
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  const names = new Map(data.data.athletes.map((a) => [a.id, a.name]));
  return (
    <div className="stack">
      {job ? <JobProgress job={job} onCancel={cancel} /> : null}
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
