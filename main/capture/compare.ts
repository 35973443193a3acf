/** Comparison of our 3D with a reference TRC (per marker, millimetres). */
import type { KeypointSet } from '../../models/capture/keypoints';
import { POSE2SIM_TRC_MARKERS } from '../../models/capture/keypoints';
import type { TrcData } from '../../models/capture/trc';
import { median, quantile } from '../../models/capture/vec';

export interface MarkerAgreement {
  marker: string;
  n: number;
  medianMm: number;
  p95Mm: number;
}

/**
 * Per-marker distances (mm) between our F×K×3 points and a Pose2Sim TRC (marker names mapped
 * through `POSE2SIM_TRC_MARKERS`), over frames where both are present.
 */
export function compareWithTrc(
  points: Float64Array,
  set: KeypointSet,
  trc: TrcData,
): { markers: MarkerAgreement[]; all: { n: number; medianMm: number; p95Mm: number } } {
  const K = set.length,
    F = Math.min(points.length / (K * 3), trc.frames),
    M = trc.markers.length;
  const markers: MarkerAgreement[] = [];
  const all: number[] = [];
  trc.markers.forEach((name, m) => {
    const ours = set.indexOf(POSE2SIM_TRC_MARKERS[name] ?? '');
    if (ours < 0) return;
    const d: number[] = [];
    for (let f = 0; f < F; f++) {
      const a = (f * K + ours) * 3,
        b = (f * M + m) * 3;
      const dist = Math.hypot(
        (points[a] ?? NaN) - (trc.points[b] ?? NaN),
        (points[a + 1] ?? NaN) - (trc.points[b + 1] ?? NaN),
        (points[a + 2] ?? NaN) - (trc.points[b + 2] ?? NaN),
      );
      if (Number.isFinite(dist)) d.push(dist * 1000);
    }
    all.push(...d);
    markers.push({ marker: name, n: d.length, medianMm: median(d), p95Mm: quantile(d, 0.95) });
  });
  return { markers, all: { n: all.length, medianMm: median(all), p95Mm: quantile(all, 0.95) } };
}
