/**
 * OpenSim TRC marker files (tab-separated; format as written by Pose2Sim / OpenSim).
 * Our world frame is the calibration's (Z up, metres); TRC files are Y-up for OpenSim, with
 * Pose2Sim's mapping (X, Y, Z)_trc = (Y, Z, X)_world.
 */

/** A parsed TRC: marker names and F×M×3 coordinates in the calibration world frame (Z up, m). */
export interface TrcData {
  markers: string[];
  fps: number;
  frames: number;
  /** F×M×3, world frame (Z up), metres; NaN = missing. */
  points: Float64Array;
}

/** Y-up TRC → Z-up world: X_w = Z_trc, Y_w = X_trc, Z_w = Y_trc. */
export function trcToWorld(x: number, y: number, z: number): [number, number, number] {
  return [z, x, y];
}

/** Z-up world → Y-up TRC. */
export function worldToTrc(x: number, y: number, z: number): [number, number, number] {
  return [y, z, x];
}

/** Parse TRC text (units m or mm). */
export function parseTrc(text: string): TrcData {
  const lines = text.split(/\r?\n/);
  if (!lines[0]?.startsWith('PathFileType')) throw new Error('not a TRC file (no PathFileType header)');
  const keys = (lines[1] ?? '').split('\t');
  const vals = (lines[2] ?? '').split('\t');
  const meta = new Map(keys.map((k, i) => [k.trim(), (vals[i] ?? '').trim()]));
  const fps = Number(meta.get('DataRate'));
  const units = meta.get('Units') ?? 'm';
  const scale = units === 'mm' ? 1e-3 : 1;
  const names = (lines[3] ?? '')
    .split('\t')
    .slice(2)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const rows = lines.slice(5).filter((l) => l.trim().length > 0);
  const M = names.length;
  const points = new Float64Array(rows.length * M * 3).fill(NaN);
  rows.forEach((row, f) => {
    const c = row.split('\t');
    for (let m = 0; m < M; m++) {
      const x = Number(c[2 + m * 3]),
        y = Number(c[3 + m * 3]),
        z = Number(c[4 + m * 3]);
      if (c[2 + m * 3] === undefined || c[2 + m * 3] === '' || !Number.isFinite(x)) continue;
      const w = trcToWorld(x * scale, y * scale, z * scale);
      points.set(w, (f * M + m) * 3);
    }
  });
  return { markers: names, fps, frames: rows.length, points };
}

/** Write TRC text (metres, Y-up) from F×M×3 world points; missing values are left empty. */
export function formatTrc(name: string, markers: readonly string[], fps: number, points: Float64Array): string {
  const M = markers.length,
    F = points.length / (M * 3);
  const out: string[] = [];
  out.push(`PathFileType\t4\t(X/Y/Z)\t${name}`);
  out.push('DataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\tOrigDataRate\tOrigDataStartFrame\tOrigNumFrames');
  out.push(`${fps}\t${fps}\t${F}\t${M}\tm\t${fps}\t0\t${F}`);
  out.push(['Frame#', 'Time', ...markers.flatMap((m) => [m, '', ''])].join('\t'));
  out.push(['', '', ...markers.flatMap((_, i) => [`X${i + 1}`, `Y${i + 1}`, `Z${i + 1}`])].join('\t'));
  for (let f = 0; f < F; f++) {
    const row: string[] = [String(f + 1), String((f + 1) / fps)];
    for (let m = 0; m < M; m++) {
      const o = (f * M + m) * 3;
      const x = points[o] ?? NaN,
        y = points[o + 1] ?? NaN,
        z = points[o + 2] ?? NaN;
      if (!Number.isFinite(x) || !Number.isFinite(y) || !Number.isFinite(z)) row.push('', '', '');
      else row.push(...worldToTrc(x, y, z).map((v) => v.toFixed(6)));
    }
    out.push(row.join('\t'));
  }
  return out.join('\n') + '\n';
}
