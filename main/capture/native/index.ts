/**
 * The one place native addons (`native/`) are loaded (lint rule `native-addons-loaded-in-one-place`).
 * Addons are built by `npm run build:native` (run from `postinstall`).
 */
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import type { TriangulationAddon } from '../../../native/triangulation/types';
import type { OpenCvAddon } from '../../../native/opencv/types';

export type { TriangulationAddon, NativeTriangulationResult, NativeTriangulationOptions } from '../../../native/triangulation/types';
export type { OpenCvAddon, ChessboardCalibration, DecodedFrame, VideoInfo, RawImage, VideoReaderInstance } from '../../../native/opencv/types';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));

/** Repository root (main/capture/native → ../../..); overridable for packaged builds. */
function nativeRoot(): string {
  return process.env.ATHLETE_NATIVE_DIR ?? path.resolve(here, '../../../native');
}

function addonPath(name: string): string {
  return path.join(nativeRoot(), name, 'build', 'Release', `${name}.node`);
}

/** Error thrown when an addon has not been compiled. */
export class NativeAddonMissingError extends Error {
  constructor(name: string, file: string) {
    super(`native addon "${name}" is not built (${file} missing): run \`npm run build:native\``);
    this.name = 'NativeAddonMissingError';
  }
}

const cache = new Map<string, unknown>();
function load<T>(name: string): T {
  const hit = cache.get(name);
  if (hit) return hit as T;
  const file = addonPath(name);
  if (!existsSync(file)) throw new NativeAddonMissingError(name, file);
  const mod = require(file) as T;
  cache.set(name, mod);
  return mod;
}

/** True when the addon's binary exists. */
export function hasAddon(name: 'triangulation' | 'opencv'): boolean {
  return existsSync(addonPath(name));
}

/** Triangulation addon (confidence-weighted DLT). */
export function triangulationAddon(): TriangulationAddon {
  return load<TriangulationAddon>('triangulation');
}

/** OpenCV addon (checkerboard calibration, PnP, video decoding). */
export function openCvAddon(): OpenCvAddon {
  return load<OpenCvAddon>('opencv');
}
