/** Small 3-vector helpers (metres or unit directions). */
import type { Vec3 } from './camera';

export const sub = (a: Vec3, b: Vec3): Vec3 => [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
export const add = (a: Vec3, b: Vec3): Vec3 => [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
export const scale = (a: Vec3, s: number): Vec3 => [a[0] * s, a[1] * s, a[2] * s];
export const dot = (a: Vec3, b: Vec3): number => a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
export const cross = (a: Vec3, b: Vec3): Vec3 => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]];
export const length = (a: Vec3): number => Math.hypot(a[0], a[1], a[2]);
export const normalize = (a: Vec3): Vec3 => scale(a, 1 / length(a));
export const mid = (a: Vec3, b: Vec3): Vec3 => [(a[0] + b[0]) / 2, (a[1] + b[1]) / 2, (a[2] + b[2]) / 2];
export const isFiniteVec = (a: Vec3): boolean => Number.isFinite(a[0]) && Number.isFinite(a[1]) && Number.isFinite(a[2]);
export const RAD2DEG = 180 / Math.PI;

/** Median of the finite values, NaN if none. */
export function median(values: ArrayLike<number>): number {
  const v = Array.from(values as ArrayLike<number>)
    .filter(Number.isFinite)
    .sort((x, y) => x - y);
  if (v.length === 0) return NaN;
  const m = v.length >> 1;
  return v.length % 2 ? (v[m] ?? NaN) : ((v[m - 1] ?? 0) + (v[m] ?? 0)) / 2;
}

/** q-quantile (0..1, linear interpolation) of the finite values, NaN if none. */
export function quantile(values: ArrayLike<number>, q: number): number {
  const v = Array.from(values as ArrayLike<number>)
    .filter(Number.isFinite)
    .sort((x, y) => x - y);
  if (v.length === 0) return NaN;
  const pos = (v.length - 1) * q,
    lo = Math.floor(pos),
    hi = Math.ceil(pos);
  return (v[lo] ?? 0) + ((v[hi] ?? 0) - (v[lo] ?? 0)) * (pos - lo);
}
