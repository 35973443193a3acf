/**
 * Renders a checkerboard seen by a pinhole camera (no distortion), for calibration tests with
 * exact answers. The board lies in its own z = 0 plane; inner corner (i, j) is at
 * (i·square, j·square, 0), i < cols, j < rows; a white margin of one square surrounds it.
 */
import { type CameraCalibration, rodrigues } from './camera';

/** Grey image (1 channel), row-major. */
export interface GreyImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 1;
}

/**
 * Render the board as seen by `cam` (board frame = world frame of `cam`) with `ss`×`ss`
 * supersampling per pixel (anti-aliasing). Background grey 90, white 235, black 20.
 */
export function renderCheckerboard(cam: CameraCalibration, board: { cols: number; rows: number; squareM: number }, ss = 3): GreyImage {
  const { width: W, height: H } = cam;
  const R = rodrigues(cam.rvec),
    t = cam.tvec;
  const K = cam.K;
  const fx = K[0] ?? 1,
    fy = K[4] ?? 1,
    cx = K[2] ?? 0,
    cy = K[5] ?? 0;
  // camera centre in board coordinates, C = −Rᵀt
  const C = [0, 1, 2].map((j) => -((R[j] ?? 0) * t[0] + (R[3 + j] ?? 0) * t[1] + (R[6 + j] ?? 0) * t[2]));
  const sq = board.squareM;
  const x0 = -sq * 2,
    x1 = (board.cols + 1) * sq,
    y0 = -sq * 2,
    y1 = (board.rows + 1) * sq; // white margin
  const data = new Uint8Array(W * H);
  for (let v = 0; v < H; v++) {
    for (let u = 0; u < W; u++) {
      let acc = 0;
      for (let a = 0; a < ss; a++)
        for (let b = 0; b < ss; b++) {
          const du = (u + (a + 0.5) / ss - 0.5 - cx) / fx,
            dv = (v + (b + 0.5) / ss - 0.5 - cy) / fy;
          // ray direction in board coordinates: Rᵀ·[du, dv, 1]
          const d = [0, 1, 2].map((j) => (R[j] ?? 0) * du + (R[3 + j] ?? 0) * dv + (R[6 + j] ?? 0));
          const dz = d[2] ?? 0;
          let val = 90;
          if (Math.abs(dz) > 1e-12) {
            const s = -(C[2] ?? 0) / dz;
            if (s > 0) {
              const X = (C[0] ?? 0) + s * (d[0] ?? 0),
                Y = (C[1] ?? 0) + s * (d[1] ?? 0);
              if (X >= x0 && X <= x1 && Y >= y0 && Y <= y1) {
                const inSquares = X >= -sq && X <= board.cols * sq && Y >= -sq && Y <= board.rows * sq;
                val = inSquares && (Math.floor(X / sq) + Math.floor(Y / sq)) % 2 === 0 ? 20 : 235;
              }
            }
          }
          acc += val;
        }
      data[v * W + u] = Math.round(acc / (ss * ss));
    }
  }
  return { data, width: W, height: H, channels: 1 };
}
