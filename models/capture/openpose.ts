/**
 * OpenPose JSON frames (`{"version":1.3,"people":[{"pose_keypoints_2d":[x,y,c,…]}]}`) → keypoints.
 * x, y in pixels (origin top-left), c confidence 0..1; (0, 0, 0) = not detected.
 */
import { z } from 'zod';

export const OpenPoseFrame = z
  .object({
    people: z.array(z.object({ pose_keypoints_2d: z.array(z.number()).optional() }).passthrough()),
  })
  .passthrough();
export type OpenPoseFrame = z.infer<typeof OpenPoseFrame>;

/** One person's keypoints: K×3 (x px, y px, confidence), NaN/0 when not detected. */
export type Keypoints2D = Float64Array;

/** All people of a frame as K×3 arrays (first `keypoints` entries of each skeleton). */
export function openPosePeople(frame: unknown, keypoints: number): Keypoints2D[] {
  const parsed = OpenPoseFrame.parse(frame);
  return parsed.people.map((p) => {
    const a = p.pose_keypoints_2d ?? [];
    const out = new Float64Array(keypoints * 3);
    for (let k = 0; k < keypoints; k++) {
      const x = a[k * 3],
        y = a[k * 3 + 1],
        c = a[k * 3 + 2];
      if (x === undefined || y === undefined || c === undefined || c <= 0) {
        out[k * 3] = NaN;
        out[k * 3 + 1] = NaN;
        out[k * 3 + 2] = 0;
        continue;
      }
      out[k * 3] = x;
      out[k * 3 + 1] = y;
      out[k * 3 + 2] = c;
    }
    return out;
  });
}

/** Distance (px) from `pt` to the nearest of the person's confident keypoints; Infinity if none. */
export function distanceToPerson(kp: Keypoints2D, pt: [number, number], minConf = 0.3): number {
  let best = Infinity;
  for (let k = 0; k < kp.length / 3; k++) {
    if ((kp[k * 3 + 2] ?? 0) < minConf) continue;
    best = Math.min(best, Math.hypot((kp[k * 3] ?? NaN) - pt[0], (kp[k * 3 + 1] ?? NaN) - pt[1]));
  }
  return best;
}

/** Bounding box [x0, y0, x1, y1] (px) of confident keypoints, or null. */
export function personBox(kp: Keypoints2D, minConf = 0.3): [number, number, number, number] | null {
  let x0 = Infinity,
    y0 = Infinity,
    x1 = -Infinity,
    y1 = -Infinity;
  for (let k = 0; k < kp.length / 3; k++) {
    if ((kp[k * 3 + 2] ?? 0) < minConf) continue;
    const x = kp[k * 3] ?? NaN,
      y = kp[k * 3 + 1] ?? NaN;
    x0 = Math.min(x0, x);
    y0 = Math.min(y0, y);
    x1 = Math.max(x1, x);
    y1 = Math.max(y1, y);
  }
  return Number.isFinite(x0) ? [x0, y0, x1, y1] : null;
}
