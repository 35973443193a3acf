/**
 * TF.js runtime for the shipped 2D pose models: the WASM backend (CPU backend as fallback) and a
 * loader for TF.js graph models (`<name>.json` + `<name>.bin`) from the repository's weights folder
 * (`main/capture/pose/weights/`, see its README.md for sources and licences).
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { loadGraphModel, type GraphModel } from '@tensorflow/tfjs-converter';
import type { io } from '@tensorflow/tfjs-core';

const require = createRequire(import.meta.url);
let backendReady: Promise<string> | null = null;

/** Select the WASM backend once per thread (falls back to the CPU backend). Resolves to the backend name. */
export function initTfBackend(): Promise<string> {
  backendReady ??= (async () => {
    try {
      const dist = path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
      setWasmPaths(dist + path.sep);
      if (await tf.setBackend('wasm')) {
        await tf.ready();
        return 'wasm';
      }
    } catch {
      /* fall through */
    }
    await tf.setBackend('cpu');
    await tf.ready();
    return 'cpu';
  })();
  return backendReady;
}

/**
 * Folder of the TF.js pose weights: `ATHLETE_POSE_WEIGHTS` when set (e.g. to try other graph
 * models of the same families), else `main/capture/pose/weights/` in the repository.
 */
export function poseWeightsDir(): string {
  return process.env.ATHLETE_POSE_WEIGHTS ?? path.join(path.dirname(fileURLToPath(import.meta.url)), 'weights');
}

/** Load the TF.js graph model `<dir>/<name>.json` + `.bin` from disk. Throws when either file is missing. */
export async function loadTfjsGraph(name: string, dir = poseWeightsDir()): Promise<GraphModel> {
  await initTfBackend();
  const base = path.join(dir, name);
  if (!existsSync(`${base}.json`) || !existsSync(`${base}.bin`)) throw new Error(`pose model weights not found: ${base}.json / .bin`);
  const json = JSON.parse(readFileSync(`${base}.json`, 'utf8')) as {
    modelTopology: unknown;
    weightsManifest: { weights: io.WeightsManifestEntry[] }[];
    format?: string;
    generatedBy?: string;
    convertedBy?: string;
    signature?: unknown;
  };
  const bin = readFileSync(`${base}.bin`);
  const handler: io.IOHandler = {
    load: async () => ({
      modelTopology: json.modelTopology as object,
      weightSpecs: json.weightsManifest.flatMap((g) => g.weights),
      weightData: bin.buffer.slice(bin.byteOffset, bin.byteOffset + bin.byteLength),
      format: json.format,
      generatedBy: json.generatedBy,
      convertedBy: json.convertedBy ?? undefined,
      signature: json.signature as object,
    }),
  };
  return loadGraphModel(handler);
}
