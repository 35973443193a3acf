/**
 * Rig set-up and calibration wizard: choose the cameras (attached cameras, or video files standing
 * in for them) and see them live; intrinsics from a checkerboard held in front of each camera
 * (the board found is drawn over the frame, a coverage map shows where boards have been kept, the
 * reprojection RMS in px with its good/poor band, retake per view or per camera); camera poses
 * from a board lying on the floor — or import an existing TOML; the declared layout (front, side,
 * oblique…) checked against the calibrated poses (drift in degrees); save the rig for a room.
 * Detection and the solves run in main on worker threads (main/capture/live/wizard.ts); this page
 * polls their state.
 */
import { useEffect, useRef, useState } from 'react';
import type { CallOutput } from '../../../../models/contract';
import type { CalibrationWizardState, WizardCameraState } from '../../../../models/capture/rig-wizard';
import { LAYOUT_CHOICES } from '../../../../models/capture/rig-wizard';
import type { ErrorPayload } from '../../../../models/errors';
import { CallError, call } from '../../bridge';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { numberInput } from '../../format';

type Opened = CallOutput<'capture.openRig'>;
type Frame = NonNullable<CallOutput<'capture.calibFrame'>>;
const asError = (e: unknown): ErrorPayload => (e instanceof CallError ? e.payload : { code: 'Internal', message: e instanceof Error ? e.message : String(e) });
const fmt = (x: number, d = 2) => x.toFixed(d);

/** The camera's newest analysed frame with the board overlay (polled; only newer frames are sent). */
function CalibFrame({ cam }: { cam: WizardCameraState }) {
  const [frame, setFrame] = useState<Frame | null>(null);
  const last = useRef(-1);
  useEffect(() => {
    let live = true;
    const tick = () =>
      call('capture.calibFrame', { camera: cam.index, after_frame: last.current }).then(
        (f) => {
          if (!live || !f) return;
          last.current = f.frame_index;
          setFrame(f);
        },
        () => undefined,
      );
    void tick();
    const t = setInterval(() => void tick(), 500);
    return () => {
      live = false;
      clearInterval(t);
    };
  }, [cam.index]);
  if (!frame) return <div className="muted small calib-wait">waiting for the first analysed frame…</div>;
  const c = frame.corners;
  const pts = c ? Array.from({ length: c.length / 2 }, (_, j) => `${c[j * 2]},${c[j * 2 + 1]}`).join(' ') : '';
  const r = Math.max(frame.width, frame.height) / 150;
  return (
    <div className="calib-frame" data-frame-index={frame.frame_index} data-board-found={c ? 'true' : 'false'}>
      <img src={`data:image/jpeg;base64,${frame.jpeg_base64}`} alt={`Live view of ${cam.name}${c ? ' with the board found' : ''}`} />
      <svg viewBox={`0 0 ${frame.width} ${frame.height}`} preserveAspectRatio="none" aria-hidden="true">
        {c ? (
          <>
            <polyline points={pts} className="board-path" strokeWidth={r / 2} />
            <circle cx={c[0]} cy={c[1]} r={r * 1.5} className="board-origin" />
          </>
        ) : null}
      </svg>
    </div>
  );
}

/** Where boards have been kept in the image: one cell per grid square, darker with more views. */
function CoverageMap({ cam, grid }: { cam: WizardCameraState; grid: { cols: number; rows: number } }) {
  const w = 80,
    h = Math.round((80 * cam.height) / cam.width);
  const max = Math.max(1, ...cam.coverage);
  return (
    <figure className="coverage" data-coverage={fmt(cam.coverage_fraction)}>
      <svg
        viewBox={`0 0 ${w} ${h}`}
        width={w}
        height={h}
        role="img"
        aria-label={`Coverage map of ${cam.name}: ${Math.round(cam.coverage_fraction * 100)} % of the image`}
      >
        <rect x={0} y={0} width={w} height={h} className="coverage-bg" />
        {cam.coverage.map((n, k) =>
          n > 0 ? (
            <rect
              key={k}
              x={((k % grid.cols) * w) / grid.cols}
              y={(Math.floor(k / grid.cols) * h) / grid.rows}
              width={w / grid.cols}
              height={h / grid.rows}
              className="coverage-cell"
              fillOpacity={0.25 + (0.75 * n) / max}
            />
          ) : null,
        )}
      </svg>
      <figcaption className="small">Coverage {Math.round(cam.coverage_fraction * 100)} % of the image</figcaption>
    </figure>
  );
}

function CameraCard({
  cam,
  state,
  onState,
  onError,
}: {
  cam: WizardCameraState;
  state: CalibrationWizardState;
  onState: (s: CalibrationWizardState) => void;
  onError: (e: ErrorPayload) => void;
}) {
  const d = cam.detection;
  const i = cam.intrinsics;
  const retake = (view?: number) =>
    call('capture.calibRetake', { camera: cam.index, ...(view !== undefined ? { view } : {}) }).then(onState, (e: unknown) => onError(asError(e)));
  return (
    <section className="card calib-cam" data-calib-camera={cam.name} data-views={cam.views}>
      <h3>
        {cam.name}{' '}
        <span className="muted small">
          {cam.width}×{cam.height}
        </span>
      </h3>
      <CalibFrame cam={cam} />
      <p className="small" role="status">
        {d ? (
          d.found ? (
            <span className="badge ok">{d.board === 'intrinsics' ? 'Board found' : 'Floor board found'}</span>
          ) : (
            <span className="badge warn">{d.board === 'intrinsics' ? 'No board in view' : 'No floor board in view'}</span>
          )
        ) : (
          <span className="badge muted">starting…</span>
        )}{' '}
        {d ? (
          <span className="muted">
            frame {d.frame_index} · {d.ms} ms
          </span>
        ) : null}
        {cam.error ? <span className="warn-text"> {cam.error}</span> : null}
      </p>
      <div className="calib-row">
        <CoverageMap cam={cam} grid={state.coverage_grid} />
        <div>
          <p className="small">
            <strong data-views-count={cam.views}>{cam.views}</strong> board views kept
          </p>
          {i ? (
            <p className="small" data-rms-band={i.band ?? 'imported'}>
              {i.rms_px !== null ? (
                <>
                  Reprojection error <strong data-rms={fmt(i.rms_px, 3)}>{fmt(i.rms_px, 3)} px</strong>{' '}
                  <span className={`badge ${i.band === 'good' ? 'ok' : 'warn'}`}>{i.band === 'good' ? 'good' : 'poor'}</span>
                </>
              ) : (
                <>Intrinsics imported (the file gives no reprojection error)</>
              )}
              <br />
              <span className="muted">
                fx {fmt(i.fx, 1)} · fy {fmt(i.fy, 1)} · centre ({fmt(i.cx, 1)}, {fmt(i.cy, 1)}) px
              </span>
            </p>
          ) : null}
          {cam.extrinsics ? (
            <p className="small" data-pose={cam.name}>
              Pose {cam.extrinsics.source === 'imported' ? 'imported' : `from the floor board (PnP ${fmt(cam.extrinsics.rms_px ?? 0, 2)} px)`}
            </p>
          ) : null}
        </div>
      </div>
      {i && i.per_view_rms_px.length ? (
        <details className="small">
          <summary>Error per view (retake the worst)</summary>
          <ol className="view-list">
            {i.per_view_rms_px.map((e, k) => (
              <li key={k} data-view-rms={fmt(e, 3)}>
                {fmt(e, 3)} px{' '}
                <button type="button" className="link" onClick={() => void retake(k)}>
                  Drop view {k + 1}
                </button>
              </li>
            ))}
          </ol>
        </details>
      ) : null}
      {cam.views > 0 ? (
        <button type="button" data-action="retake" onClick={() => void retake()}>
          Retake {cam.name}
        </button>
      ) : null}
    </section>
  );
}

/** Declared layout per camera, checked against the calibrated poses. */
function LayoutCheck({
  state,
  onState,
  onError,
}: {
  state: CalibrationWizardState;
  onState: (s: CalibrationWizardState) => void;
  onError: (e: ErrorPayload) => void;
}) {
  const [labels, setLabels] = useState<Record<string, string>>(() =>
    Object.fromEntries(
      state.cameras.map((c, k) => [
        c.name,
        state.layout?.declared.find((d) => d.camera === c.name)?.label ?? LAYOUT_CHOICES[(k * 2) % LAYOUT_CHOICES.length]!.label,
      ]),
    ),
  );
  const [tol, setTol] = useState(String(state.layout?.tolerance_deg ?? 15));
  const report = state.layout?.report;
  return (
    <div>
      <form
        className="capture-form"
        aria-label="Declared layout"
        onSubmit={(e) => {
          e.preventDefault();
          const layout = state.cameras.map((c) => {
            const ch = LAYOUT_CHOICES.find((x) => x.label === labels[c.name]) ?? LAYOUT_CHOICES[0];
            return { camera: c.name, label: ch.label, yaw_deg: ch.yaw_deg };
          });
          const t = numberInput(tol);
          if (typeof t === 'string') {
            onError({ code: 'Validation', message: 'Enter the tolerance in degrees as a number (e.g. 15 or 12.5), with a point for decimals.' });
            return;
          }
          call('capture.calibLayout', { layout, tolerance_deg: typeof t === 'number' && t > 0 ? t : 15 }).then(onState, (err: unknown) =>
            onError(asError(err)),
          );
        }}
      >
        {state.cameras.map((c) => (
          <label key={c.name}>
            {c.name}
            <select name={`layout-${c.name}`} value={labels[c.name]} onChange={(e) => setLabels({ ...labels, [c.name]: e.target.value })}>
              {LAYOUT_CHOICES.map((x) => (
                <option key={x.label} value={x.label}>
                  {x.label}
                </option>
              ))}
            </select>
          </label>
        ))}
        <label>
          Tolerance (°)
          <input name="tolerance_deg" type="text" inputMode="decimal" value={tol} onChange={(e) => setTol(e.target.value)} className="narrow" />
        </label>
        <button type="submit" data-action="check-layout" disabled={!state.complete}>
          Check layout
        </button>
      </form>
      {report ? (
        <div data-layout-drifted={report.drifted ? 'true' : 'false'}>
          <table className="table small" aria-label="Layout check">
            <thead>
              <tr>
                <th scope="col">Camera</th>
                <th scope="col" className="num">
                  Declared yaw
                </th>
                <th scope="col" className="num">
                  Calibrated yaw
                </th>
                <th scope="col" className="num">
                  Drift
                </th>
              </tr>
            </thead>
            <tbody>
              {report.perCamera.map((p) => (
                <tr key={p.camera} data-drift={p.camera}>
                  <th scope="row">{p.camera}</th>
                  <td className="num">{p.declaredYawDeg === null ? '—' : `${Math.round(p.declaredYawDeg)}°`}</td>
                  <td className="num">{Math.round(p.measuredYawDeg)}°</td>
                  <td className="num" data-drift-deg={p.yawDriftDeg === null ? '' : fmt(p.yawDriftDeg, 1)}>
                    {p.yawDriftDeg === null ? '—' : `${fmt(p.yawDriftDeg, 1)}°`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <p className="small" role="status">
            {report.drifted ? (
              <span className="badge warn">Does not match the declared layout</span>
            ) : (
              <span className="badge ok">Matches the declared layout</span>
            )}{' '}
            Largest drift {fmt(report.maxYawDriftDeg, 1)}° (tolerance {state.layout!.tolerance_deg}°; yaws compared after the best common rotation).{' '}
            {report.reasons.join('; ')}
          </p>
        </div>
      ) : null}
    </div>
  );
}

function Wizard({
  state,
  onState,
  rigs,
}: {
  state: CalibrationWizardState;
  onState: (s: CalibrationWizardState) => void;
  rigs: CallOutput<'capture.listRigs'>['rigs'];
}) {
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [saved, setSaved] = useState<CallOutput<'capture.calibSave'> | null>(null);
  const [room, setRoom] = useState('');
  const [replace, setReplace] = useState('');
  const act = <T,>(what: string, p: () => Promise<T>, then: (r: T) => void) => {
    setError(null);
    setNote(null);
    setBusy(what);
    p().then(
      (r) => {
        setBusy(null);
        then(r);
      },
      (e: unknown) => {
        setBusy(null);
        setError(asError(e));
      },
    );
  };
  const ready3 = state.cameras.filter((c) => c.views >= 3).length;
  const allK = state.cameras.every((c) => c.intrinsics);
  return (
    <div className="stack">
      <section className="card" data-step="intrinsics">
        <h2>2. Intrinsics: the checkerboard in front of each camera</h2>
        <p className="small muted">
          Board {state.intrinsic_board.cols}×{state.intrinsic_board.rows} inner corners, {state.intrinsic_board.square_mm} mm squares. Hold it still at
          different places and tilts until the coverage map fills; keep at least 3 views per camera (10–20 is better). Reprojection error: good below{' '}
          {state.rms_good_below_px} px (the calibration target of the product&apos;s capture design), poor above.
        </p>
        <div className="button-row">
          <button
            type="button"
            data-action="phase-intrinsics"
            className={state.phase === 'intrinsics' ? 'active' : ''}
            onClick={() => act('phase', () => call('capture.calibSet', { phase: 'intrinsics' }), onState)}
          >
            Look for the hand-held board
          </button>
          <button
            type="button"
            className="primary"
            data-action="capture-views"
            disabled={state.phase !== 'intrinsics'}
            onClick={() =>
              act(
                'capture',
                () => call('capture.calibCapture', {}),
                (r) => {
                  onState(r.state);
                  const kept = r.results.filter((x) => x.kept).length;
                  setNote(
                    `${kept} of ${r.results.length} cameras kept a view.${r.results
                      .filter((x) => !x.kept)
                      .map((x) => ` ${state.cameras[x.camera]?.name}: ${x.reason}.`)
                      .join('')}`,
                  );
                },
              )
            }
          >
            Capture views
          </button>
          <label className="check">
            <input
              type="checkbox"
              name="auto_capture"
              checked={state.auto_capture}
              onChange={(e) => {
                const on = e.target.checked;
                onState({ ...state, auto_capture: on }); // shown at once; the answer confirms it
                act('auto', () => call('capture.calibSet', { auto_capture: on }), onState);
              }}
            />
            Capture new board positions automatically
          </label>
          <button
            type="button"
            data-action="solve-intrinsics"
            disabled={ready3 === 0 || busy !== null}
            onClick={() => act('intrinsics', () => call('capture.calibIntrinsics', {}), onState)}
          >
            {busy === 'intrinsics' ? 'Computing…' : 'Compute intrinsics'}
          </button>
        </div>
      </section>
      <div className="calib-grid">
        {state.cameras.map((c) => (
          <CameraCard key={c.index} cam={c} state={state} onState={onState} onError={setError} />
        ))}
      </div>
      {note ? (
        <p className="small" role="status" data-capture-note>
          {note}
        </p>
      ) : null}
      {error ? <ErrorNote error={error} /> : null}
      <section className="card" data-step="extrinsics">
        <h2>3. Camera poses: the board on the floor</h2>
        <p className="small muted">
          Lay the {state.extrinsic_board.cols}×{state.extrinsic_board.rows} board ({state.extrinsic_board.square_mm} mm squares) flat on the floor where every
          camera sees all of it. Its first corner becomes the room&apos;s origin, the floor the ground plane.
        </p>
        <div className="button-row">
          <button
            type="button"
            data-action="phase-extrinsics"
            className={state.phase === 'extrinsics' ? 'active' : ''}
            onClick={() => act('phase', () => call('capture.calibSet', { phase: 'extrinsics', auto_capture: false }), onState)}
          >
            Look for the floor board
          </button>
          <button
            type="button"
            className="primary"
            data-action="solve-extrinsics"
            disabled={!allK || state.phase !== 'extrinsics' || busy !== null}
            onClick={() => act('extrinsics', () => call('capture.calibExtrinsics', {}), onState)}
          >
            {busy === 'extrinsics' ? 'Solving…' : 'Solve camera poses'}
          </button>
        </div>
        <p className="small">
          Or import an existing calibration (TOML, Pose2Sim layout: one table per camera with size, matrix, distortions, rotation, translation):{' '}
          <input
            type="file"
            name="import_toml"
            accept=".toml,text/plain"
            aria-label="Import a calibration TOML"
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (!f) return;
              act('import', () => f.text().then((toml) => call('capture.calibImport', { toml, file_name: f.name })), onState);
            }}
          />
        </p>
      </section>
      <section className="card" data-step="layout">
        <h2>4. Declared layout</h2>
        <p className="small muted">
          Where each camera stands as seen from the athlete. Readings from a rig whose poses drift from this beyond the tolerance are marked not trustworthy.
        </p>
        <LayoutCheck state={state} onState={onState} onError={setError} />
      </section>
      <section className="card" data-step="save">
        <h2>5. Save the rig</h2>
        <form
          className="capture-form"
          aria-label="Save the rig"
          onSubmit={(e) => {
            e.preventDefault();
            act('save', () => call('capture.calibSave', { name: room.trim(), ...(replace ? { rig_id: replace } : {}) }), setSaved);
          }}
        >
          <label>
            Room
            <input name="room" value={room} onChange={(e) => setRoom(e.target.value)} placeholder="e.g. Clinic room 1" required maxLength={100} />
          </label>
          <label>
            Replaces
            <select name="rig_id" value={replace} onChange={(e) => setReplace(e.target.value)}>
              <option value="">— a new rig —</option>
              {rigs
                .filter((r) => r.cameras.length === state.cameras.length)
                .map((r) => (
                  <option key={r.id} value={r.id}>
                    {r.name} · {r.cameras.length} cameras
                  </option>
                ))}
            </select>
          </label>
          <button type="submit" className="primary" data-action="save-rig" disabled={!state.complete || !room.trim() || busy !== null}>
            Save rig
          </button>
        </form>
        {!state.complete ? (
          <p className="small muted">Every camera needs intrinsics and a pose (or import a calibration) before the rig can be saved.</p>
        ) : null}
        {saved ? (
          <p role="status" data-saved-rig={saved.rig_id}>
            Saved. Calibration file: <code>{saved.toml_path}</code>{' '}
            <a href={URL.createObjectURL(new Blob([saved.toml], { type: 'application/toml' }))} download="Calib.toml">
              Download Calib.toml
            </a>
          </p>
        ) : null}
      </section>
    </div>
  );
}

export function RigView({ onState }: { onState: (s: 'loading' | 'ready' | 'error') => void }) {
  const data = useLoad(async () => {
    const [s, r, st] = await Promise.all([call('capture.sources', {}), call('capture.listRigs', {}), call('capture.calibState', {})]);
    return { sources: s, rigs: r.rigs, state: st };
  }, 'rig');
  useEffect(() => onState(data.state), [data.state, onState]);
  const [chosen, setChosen] = useState<string[]>([]);
  const [opened, setOpened] = useState<Opened | null>(null);
  const [wiz, setWiz] = useState<CalibrationWizardState | null>(null);
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [board, setBoard] = useState({ cols: '4', rows: '7', square_mm: '60', fcols: '5', frows: '8', fsquare_mm: '100' });
  const initial = data.state === 'ready' ? data.data.state : null;
  const state = wiz ?? initial;
  const running = state !== null;
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => void call('capture.calibState', {}).then(setWiz, () => undefined), 700);
    return () => clearInterval(t);
  }, [running]);
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  const { sources, rigs } = data.data;
  // Read strictly (format.ts numberInput): a browser number field read "22,5" mm as 225.
  const num = (k: keyof typeof board) => numberInput(board[k]);
  return (
    <div className="stack rig-wizard" data-wizard={running ? 'running' : 'idle'}>
      <section className="card" data-step="cameras">
        <h2>1. Cameras and boards</h2>
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
        <form
          className="capture-form"
          aria-label="Boards"
          onSubmit={(e) => {
            e.preventDefault();
            setError(null);
            const v = Object.fromEntries((Object.keys(board) as (keyof typeof board)[]).map((k) => [k, num(k)])) as Record<keyof typeof board, unknown>;
            const bad = (Object.keys(v) as (keyof typeof board)[]).filter((k) => typeof v[k] !== 'number');
            if (bad.length) {
              setError({
                code: 'Validation',
                message: `Enter the board sizes as numbers: digits, with a point for decimals (22.5), no comma or spaces (${bad.join(', ')}). Nothing was started.`,
              });
              return;
            }
            const n = v as Record<keyof typeof board, number>;
            const start = () =>
              call('capture.calibStart', {
                intrinsic_board: { cols: n.cols, rows: n.rows, square_mm: n.square_mm },
                extrinsic_board: { cols: n.fcols, rows: n.frows, square_mm: n.fsquare_mm },
              });
            (chosen.length ? call('capture.openRig', { source_ids: chosen }).then((o) => (setOpened(o), start())) : start()).then(setWiz, (err: unknown) =>
              setError(asError(err)),
            );
          }}
        >
          {(
            [
              ['cols', 'Board corners across'],
              ['rows', 'Board corners down'],
              ['square_mm', 'Square (mm)'],
              ['fcols', 'Floor board corners across'],
              ['frows', 'Floor board corners down'],
              ['fsquare_mm', 'Floor square (mm)'],
            ] as const
          ).map(([k, label]) => (
            <label key={k}>
              {label}
              <input
                name={k}
                type="text"
                inputMode="decimal"
                value={board[k]}
                onChange={(e) => setBoard({ ...board, [k]: e.target.value })}
                className="narrow"
              />
            </label>
          ))}
          <button type="submit" className="primary" data-action="start-calibration" disabled={chosen.length === 0 && !opened}>
            {running ? 'Restart calibration' : 'Open cameras and start'}
          </button>
          {running ? (
            <button
              type="button"
              onClick={() =>
                void call('capture.calibClose', {}).then(() => {
                  setWiz(null);
                  data.reload();
                })
              }
            >
              Stop calibration
            </button>
          ) : null}
        </form>
        <p className="small muted">
          Corners are the inner corners where four squares meet (OpenCV&apos;s pattern size). The floor board needs an odd total (e.g. 5×8) so every camera
          finds the same origin.
        </p>
        {error ? <ErrorNote error={error} /> : null}
      </section>
      {state ? <Wizard state={state} onState={setWiz} rigs={rigs} /> : null}
    </div>
  );
}
