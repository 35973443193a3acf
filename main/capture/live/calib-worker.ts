/**
 * Calibration worker thread (started by `CalibrationWorker` in calib-pool.ts): board detection on
 * a camera frame, `calibrateCamera` over a camera's views and the floor-board PnP run here, off
 * the main (Electron main / web host) thread. Messages: {@link CalibRequest} in, {@link CalibReply} out.
 */
import { parentPort } from 'node:worker_threads';
import { calibrateExtrinsics, calibrateFromCorners } from '../calibration';
import { openCvAddon } from '../native/index';
import type { CalibReply, CalibRequest } from './calib-pool';

const port = parentPort;
if (!port) throw new Error('calib-worker.ts runs as a worker thread');

port.on('message', (m: CalibRequest) => {
  const t0 = performance.now();
  try {
    const cv = openCvAddon();
    let reply: CalibReply;
    if (m.type === 'detect') {
      const img = cv.decodeImage(m.jpeg);
      const corners = cv.findChessboard(img, m.board.cols, m.board.rows, m.maxWidth ?? 0);
      reply = { id: m.id, ok: true, type: 'detect', corners, width: img.width, height: img.height, ms: performance.now() - t0 };
    } else if (m.type === 'intrinsics') {
      const r = calibrateFromCorners(m.views, m.width, m.height, m.board);
      reply = { id: m.id, ok: true, type: 'intrinsics', ...r, ms: performance.now() - t0 };
    } else {
      const img = cv.decodeImage(m.jpeg);
      const r = calibrateExtrinsics(m.name, img, m.board, m.intrinsics);
      reply = { id: m.id, ok: true, type: 'extrinsics', camera: r.camera, rmsPx: r.rmsPx, ms: performance.now() - t0 };
    }
    port.postMessage(reply);
  } catch (e) {
    const err = e as Error & { code?: string; kind?: string };
    port.postMessage({ id: m.id, ok: false, name: err.name, code: err.kind ?? err.code ?? null, message: err.message } satisfies CalibReply);
  }
});
