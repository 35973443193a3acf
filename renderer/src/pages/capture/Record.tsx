/**
 * Record a trial: choose the cameras (attached cameras, or video files standing in for them) and see
 * a live preview grid; choose the athlete, the test and the rig (its calibration); a 3-second
 * countdown, record, stop (every file closed; a camera that failed is named and what it wrote is
 * kept); then one tap on the athlete in the first camera's frame, and process. The cameras are
 * captured in main by the native addon on their own threads; this page only shows snapshots.
 */
import { useEffect, useRef, useState } from 'react';
import type { CallOutput, CaptureStopView } from '../../../../models/contract';
import { CAPTURE_TESTS } from '../../../../models/capture/series';
import type { ErrorPayload } from '../../../../models/errors';
import { CallError, call } from '../../bridge';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { CrossCheckInput, crossCheck, FramesInput, JobProgress, maxFrames, useCaptureJob } from './JobProgress';
import { TEST_LABEL } from './labels';
import { TapFrame } from './TapFrame';

type Opened = CallOutput<'capture.openRig'>;
const asError = (e: unknown): ErrorPayload => (e instanceof CallError ? e.payload : { code: 'Internal', message: e instanceof Error ? e.message : String(e) });

/** Live preview of every open camera (a snapshot per camera every 400 ms). */
function PreviewGrid({ opened }: { opened: Opened }) {
  const [frames, setFrames] = useState<Record<number, string>>({});
  useEffect(() => {
    let live = true;
    const tick = () =>
      Promise.all(opened.sources.map((s) => call('capture.preview', { camera: s.index, max_width: 320 }).catch(() => null))).then((fs) => {
        if (!live) return;
        const next: Record<number, string> = {};
        fs.forEach((f) => {
          if (f) next[f.camera] = `data:image/jpeg;base64,${f.jpeg_base64}`;
        });
        setFrames(next);
      });
    void tick();
    const t = setInterval(() => void tick(), 400);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [opened]);
  return (
    <div className="preview-grid" aria-label="Live preview">
      {opened.sources.map((s) => (
        <figure key={s.index} data-preview={s.name} data-has-frame={frames[s.index] ? 'true' : 'false'}>
          {frames[s.index] ? <img src={frames[s.index]} alt={`Live view of ${s.name}`} /> : <div className="muted small">waiting for a frame…</div>}
          <figcaption className="small">
            {s.name} · {s.width}×{s.height} · {s.fps} fps · {s.pixelFormat} ({s.backend})
          </figcaption>
        </figure>
      ))}
    </div>
  );
}

export function RecordView({ onState }: { onState: (s: 'loading' | 'ready' | 'error') => void }) {
  const data = useLoad(async () => {
    const [s, a, r] = await Promise.all([call('capture.sources', {}), call('athletes.list', { limit: 5000 }), call('capture.listRigs', {})]);
    return { sources: s, athletes: a.athletes, rigs: r.rigs };
  }, 'record');
  useEffect(() => onState(data.state), [data.state, onState]);
  const [chosen, setChosen] = useState<string[]>([]);
  const [opened, setOpened] = useState<Opened | null>(null);
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [countdown, setCountdown] = useState<number | null>(null);
  const [recording, setRecording] = useState<{ id: string; t0: number } | null>(null);
  const [elapsed, setElapsed] = useState(0);
  const [stopped, setStopped] = useState<CaptureStopView | null>(null);
  const [tapped, setTapped] = useState(false);
  const { job, setJob, cancel } = useCaptureJob();
  const [frames, setFrames] = useState('');
  // on by default: a reading from video is compared with a second model unless the user unticks it (README, "Second-model cross-check")
  const [cross, setCross] = useState(true);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (!recording) return;
    const t = setInterval(() => setElapsed((Date.now() - recording.t0) / 1000), 200);
    return () => clearInterval(t);
  }, [recording]);
  const running = job?.status === 'running';
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  const { sources, athletes, rigs } = data.data;

  const start = () => {
    const f = new FormData(form.current!);
    setError(null);
    setStopped(null);
    setTapped(false);
    setJob(null);
    let n = 3;
    setCountdown(n);
    const t = setInterval(() => {
      n -= 1;
      if (n > 0) return setCountdown(n);
      clearInterval(t);
      setCountdown(null);
      call('capture.startRecording', {
        athlete_id: String(f.get('athlete_id')),
        test: String(f.get('test')) as (typeof CAPTURE_TESTS)[number],
        rig_id: String(f.get('rig_id')),
      }).then(
        (rec) => setRecording({ id: rec.id, t0: Date.now() }),
        (e: unknown) => setError(asError(e)),
      );
    }, 1000);
  };

  return (
    <div className="stack record">
      <section className="card">
        <h2>1. Cameras</h2>
        {sources.sources.length === 0 ? (
          <p className="muted">
            No camera found{sources.note ? ` (${sources.note})` : ''}. Attach USB cameras, or set ATHLETE_CAPTURE_FILE_SOURCES to video files that stand in for
            them.
          </p>
        ) : (
          <fieldset className="check-list" aria-label="Cameras">
            {sources.sources.map((s) => (
              <label key={s.id} className="check">
                <input
                  type="checkbox"
                  name="source"
                  value={s.id}
                  checked={chosen.includes(s.id)}
                  onChange={(e) => setChosen(e.target.checked ? [...chosen, s.id] : chosen.filter((x) => x !== s.id))}
                />
                {s.label}
              </label>
            ))}
          </fieldset>
        )}
        <div className="button-row">
          <button
            type="button"
            data-action="open-cameras"
            disabled={chosen.length === 0 || Boolean(recording)}
            onClick={() => {
              setError(null);
              call('capture.openRig', { source_ids: chosen }).then(setOpened, (e: unknown) => setError(asError(e)));
            }}
          >
            Open cameras
          </button>
          {opened && !recording ? (
            <button type="button" onClick={() => void call('capture.closeRig', {}).then(() => setOpened(null))}>
              Close cameras
            </button>
          ) : null}
        </div>
        {opened ? <PreviewGrid opened={opened} /> : null}
      </section>
      <section className="card">
        <h2>2. Record</h2>
        <form ref={form} className="capture-form" aria-label="Record a trial" onSubmit={(e) => e.preventDefault()}>
          <label>
            Athlete
            <select name="athlete_id">
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
          <label>
            Rig (calibration)
            <select name="rig_id">
              {rigs.map((r) => (
                <option key={r.id} value={r.id}>
                  {r.name} · {r.cameras.length} cameras
                </option>
              ))}
            </select>
          </label>
          {recording ? (
            <button
              type="button"
              className="danger"
              data-action="stop"
              onClick={() => {
                call('capture.stopRecording', {}).then(
                  (s) => {
                    setRecording(null);
                    setStopped(s);
                  },
                  (e: unknown) => setError(asError(e)),
                );
              }}
            >
              Stop ({elapsed.toFixed(1)} s)
            </button>
          ) : (
            <button type="button" className="primary" data-action="record" disabled={!opened || countdown !== null || rigs.length === 0} onClick={start}>
              Record
            </button>
          )}
        </form>
        {countdown !== null ? (
          <p className="big-number" data-countdown={countdown} role="status">
            {countdown}
          </p>
        ) : null}
        {recording ? (
          <p role="status" data-recording="true">
            Recording… {elapsed.toFixed(1)} s
          </p>
        ) : null}
        {stopped ? (
          <div data-stopped={stopped.recording.id} role="status">
            <p>
              Recorded {stopped.frames} frames ({stopped.seconds.toFixed(1)} s) per camera.
            </p>
            <table className="table small">
              <thead>
                <tr>
                  <th scope="col">Camera</th>
                  <th scope="col" className="num" title="The camera's own frames in the recording (written − duplicated)">
                    Captured
                  </th>
                  <th scope="col" className="num">
                    Written
                  </th>
                  <th scope="col" className="num">
                    Dropped
                  </th>
                  <th scope="col" className="num">
                    Duplicated
                  </th>
                </tr>
              </thead>
              <tbody>
                {stopped.cameras.map((c) => (
                  <tr key={c.name}>
                    <th scope="row">{c.name}</th>
                    <td className="num">{c.captured}</td>
                    <td className="num">{c.written}</td>
                    <td className="num">{c.dropped}</td>
                    <td className="num">{c.duplicated}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {stopped.failure ? (
              <div className="error-note" role="alert">
                <strong>{stopped.failure.name} stopped the recording</strong>
                <p>{stopped.failure.message}. What was written before is kept.</p>
              </div>
            ) : null}
          </div>
        ) : null}
        {error ? <ErrorNote error={error} /> : null}
      </section>
      {stopped && opened ? (
        <section className="card">
          <h2>3. Mark the athlete and process</h2>
          <TapFrame recordingId={stopped.recording.id} fullWidth={opened.sources[0]!.width} onTapped={() => setTapped(true)} />
          <form
            className="process-form"
            aria-label="Process this recording"
            onSubmit={(e) => {
              e.preventDefault();
              call('capture.process', { recording_id: stopped.recording.id, ...maxFrames(frames), ...crossCheck(cross) }).then(setJob, (err: unknown) =>
                setError(asError(err)),
              );
            }}
          >
            <FramesInput value={frames} onChange={setFrames} />
            <CrossCheckInput checked={cross} onChange={setCross} />
            <button type="submit" className="primary" data-action="process-recording" disabled={!tapped || running}>
              Process
            </button>
          </form>
          {job ? <JobProgress job={job} onCancel={cancel} /> : null}
        </section>
      ) : null}
    </div>
  );
}
