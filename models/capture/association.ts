/**
 * Choosing the athlete among the people seen in each view ("one tap"), frame by frame.
 *
 * - Tap view: frame 0 takes the person nearest the tap (mean of confident keypoints within reach);
 *   later frames take the person whose box centre is nearest the previous one (within one box height).
 * - Other views: the candidate whose keypoints, triangulated with the tap view's person (two-view
 *   DLT), give the smallest median reprojection error (≤ `maxPairErrorPx`); when the tap view has
 *   no athlete in a frame, the candidate nearest the view's previous choice.
 * Cross-view matching by reprojection follows Pose2Sim's `personAssociation`.
 */
import { personBox, distanceToPerson, type Keypoints2D } from './openpose';
import { triangulateViews } from './triangulation';
import { median } from './vec';

/** A tap: a pixel in one camera's first frame. */
export interface Tap {
  camera: number;
  x: number;
  y: number;
}

export interface AssociationOptions {
  minConfidence?: number;
  /** Largest median two-view reprojection error (px) for a cross-view match. @default 40 */
  maxPairErrorPx?: number;
}

function centre(kp: Keypoints2D, minConf: number): [number, number, number] | null {
  const b = personBox(kp, minConf);
  return b ? [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2, b[3] - b[1]] : null;
}

function nearest(people: Keypoints2D[], prev: [number, number, number] | null, minConf: number): number {
  if (!prev) return -1;
  let best = -1,
    bd = Infinity;
  people.forEach((p, i) => {
    const c = centre(p, minConf);
    if (!c) return;
    const d = Math.hypot(c[0] - prev[0], c[1] - prev[1]);
    if (d < bd && d < Math.max(prev[2], 50)) {
      bd = d;
      best = i;
    }
  });
  return best;
}

/**
 * Build triangulation observations F×K×C×3 for the tapped athlete.
 * `people[c][f]` lists K×3 keypoint arrays; `projections` C×12.
 */
export function associateAthlete(
  people: Keypoints2D[][][],
  projections: Float64Array,
  keypoints: number,
  tap: Tap,
  opts: AssociationOptions = {},
): { observations: Float64Array; chosen: number[][] } {
  const minConf = opts.minConfidence ?? 0.3,
    maxErr = opts.maxPairErrorPx ?? 40;
  const C = people.length,
    F = people[0]?.length ?? 0,
    K = keypoints;
  const obs = new Float64Array(F * K * C * 3).fill(NaN);
  for (let i = 2; i < obs.length; i += 3) obs[i] = 0;
  const chosen: number[][] = Array.from({ length: C }, () => new Array<number>(F).fill(-1));
  const prev: ([number, number, number] | null)[] = new Array(C).fill(null);
  const pair = new Float64Array(2 * 3);
  for (let f = 0; f < F; f++) {
    const ref = people[tap.camera]?.[f] ?? [];
    let r = -1;
    if (f === 0 || !prev[tap.camera]) {
      let bd = Infinity;
      ref.forEach((p, i) => {
        const d = distanceToPerson(p, [tap.x, tap.y], minConf);
        const c = centre(p, minConf);
        if (c && d < bd && d < Math.max(c[2] * 0.6, 60)) {
          bd = d;
          r = i;
        }
      });
      // a later frame without history: fall back to the person nearest the tap
    } else r = nearest(ref, prev[tap.camera]!, minConf);
    chosen[tap.camera]![f] = r;
    const refKp = r >= 0 ? ref[r]! : null;
    if (refKp) prev[tap.camera] = centre(refKp, minConf);
    for (let c = 0; c < C; c++) {
      if (c === tap.camera) continue;
      const cands = people[c]?.[f] ?? [];
      let pick = -1;
      if (refKp) {
        let best = Infinity;
        const P2 = new Float64Array(24);
        P2.set(projections.subarray(tap.camera * 12, tap.camera * 12 + 12), 0);
        P2.set(projections.subarray(c * 12, c * 12 + 12), 12);
        cands.forEach((cand, i) => {
          const errs: number[] = [];
          for (let k = 0; k < K; k++) {
            if ((refKp[k * 3 + 2] ?? 0) < minConf || (cand[k * 3 + 2] ?? 0) < minConf) continue;
            pair.set(refKp.subarray(k * 3, k * 3 + 3), 0);
            pair.set(cand.subarray(k * 3, k * 3 + 3), 3);
            const t = triangulateViews(P2, pair, 0, 0b11, 2);
            if (t) errs.push(t[3]);
          }
          const m = errs.length >= 3 ? median(errs) : Infinity;
          if (m < best && m <= maxErr) {
            best = m;
            pick = i;
          }
        });
      } else pick = nearest(cands, prev[c] ?? null, minConf);
      chosen[c]![f] = pick;
      if (pick >= 0) prev[c] = centre(cands[pick]!, minConf);
    }
    for (let c = 0; c < C; c++) {
      const i = chosen[c]![f]!;
      if (i < 0) continue;
      const kp = people[c]![f]![i]!;
      for (let k = 0; k < K; k++) obs.set(kp.subarray(k * 3, k * 3 + 3), ((f * K + k) * C + c) * 3);
    }
  }
  return { observations: obs, chosen };
}

/**
 * Fewest keypoints of confidence ≥ `minConf` for a detection to count as a person in
 * {@link peopleInView}: a fragment of 1–3 points (a hand, a stray limb) is not someone the
 * automatic choice could have taken instead of the athlete. Our choice, not a published bound.
 */
export const MIN_PERSON_KEYPOINTS = 4;

/**
 * People each camera sees: the most detections in any one frame with at least
 * {@link MIN_PERSON_KEYPOINTS} keypoints of confidence ≥ `minConf` (every frame, not only the first:
 * an athlete who comes into view at frame 3 leaves the automatic choice to whoever was there at
 * frame 0 — issue 14 re-review). Shape: one count per camera.
 */
export function peopleInView(people: Keypoints2D[][][], minConf = 0.3): number[] {
  const isPerson = (p: Keypoints2D) => {
    let n = 0;
    for (let k = 2; k < p.length; k += 3) if ((p[k] ?? 0) >= minConf) n++;
    return n >= MIN_PERSON_KEYPOINTS;
  };
  return people.map((cam) => cam.reduce((most, frame) => Math.max(most, (frame ?? []).filter(isPerson).length), 0));
}

/** Default tap when none is given: the centre of the largest person in camera 0, frame 0. */
export function defaultTap(people: Keypoints2D[][][], minConf = 0.3): Tap | null {
  for (let c = 0; c < people.length; c++) {
    let best: Tap | null = null,
      area = 0;
    for (const p of people[c]?.[0] ?? []) {
      const b = personBox(p, minConf);
      if (!b) continue;
      const a = (b[2] - b[0]) * (b[3] - b[1]);
      if (a > area) {
        area = a;
        best = { camera: c, x: (b[0] + b[2]) / 2, y: (b[1] + b[3]) / 2 };
      }
    }
    if (best) return best;
  }
  return null;
}
