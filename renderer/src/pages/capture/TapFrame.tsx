/**
 * One tap on the athlete in the first frame of a recording's first camera (`capture.tapFrame`: the
 * frame a live recording kept when it started, or an imported trial's first video frame), stored
 * with `capture.tap` in pixels of that camera's full-size frame. Used after a live recording stops
 * (Record.tsx) and on each untapped recording of the Process page (Process.tsx).
 */
import { useState } from 'react';
import type { ErrorPayload } from '../../../../models/errors';
import { CallError, call } from '../../bridge';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';

const asError = (e: unknown): ErrorPayload => (e instanceof CallError ? e.payload : { code: 'Internal', message: e instanceof Error ? e.message : String(e) });

/**
 * The first frame to tap on; a click stores the tap and calls `onTapped` with its full-size pixels.
 * `fullWidth` (px): the camera's full frame width when the caller knows it better than the
 * recording's calibration (the open live camera); otherwise the width `capture.tapFrame` gives.
 */
export function TapFrame({ recordingId, fullWidth, onTapped }: { recordingId: string; fullWidth?: number; onTapped: (t: { x: number; y: number }) => void }) {
  const frame = useLoad(() => call('capture.tapFrame', { recording_id: recordingId }), recordingId);
  const [tap, setTap] = useState<{ x: number; y: number; px: number; py: number } | null>(null);
  const [error, setError] = useState<ErrorPayload | null>(null);
  if (frame.state === 'error') return <ErrorNote error={frame.error} />;
  if (frame.state !== 'ready') return <p className="muted small">Loading the first frame…</p>;
  return (
    <div className="tap-frame">
      <p>Tap the athlete once (others in view are ignored).</p>
      <div className="tap-wrap">
        <img
          src={`data:image/jpeg;base64,${frame.data.jpeg_base64}`}
          alt={`First frame of ${frame.data.camera}: tap the athlete`}
          data-tap-image={frame.data.camera}
          onClick={(e) => {
            const r = e.currentTarget.getBoundingClientRect();
            const scale = (fullWidth ?? frame.data.width) / e.currentTarget.naturalWidth;
            const x = ((e.clientX - r.left) / r.width) * e.currentTarget.naturalWidth * scale;
            const y = ((e.clientY - r.top) / r.height) * e.currentTarget.naturalHeight * scale;
            setError(null);
            call('capture.tap', { recording_id: recordingId, camera: frame.data.camera, x, y }).then(
              () => {
                setTap({ x, y, px: ((e.clientX - r.left) / r.width) * 100, py: ((e.clientY - r.top) / r.height) * 100 });
                onTapped({ x, y });
              },
              (err: unknown) => setError(asError(err)),
            );
          }}
        />
        {tap ? <span className="tap-mark" style={{ left: `${tap.px}%`, top: `${tap.py}%` }} aria-hidden="true" /> : null}
      </div>
      {tap ? (
        <p className="small" data-tapped="true">
          Athlete marked at ({Math.round(tap.x)}, {Math.round(tap.y)}) px in {frame.data.camera}.
        </p>
      ) : null}
      {error ? <ErrorNote error={error} /> : null}
    </div>
  );
}
