/**
 * MoveNet SinglePose (Google, Apache-2.0; TF.js graph converted from tfhub
 * google/movenet/singlepose/lightning/4, shipped in `weights/`) on the TF.js WASM backend.
 * Input int32 [1, S, S, 3] raw RGB (S = 192 Lightning, 256 Thunder) from a square crop;
 * output [1, 1, 17, 3] = (y, x, score) normalised to the crop, COCO-17 order.
 */
import * as tf from '@tensorflow/tfjs-core';
import type { GraphModel } from '@tensorflow/tfjs-converter';
import type { OpenCvAddon, RawImage } from '../native/index';
import { cropBox } from './geometry';
import { loadTfjsGraph } from './tfjs';
import type { Box } from './types';

export class MoveNet {
  private constructor(
    private readonly model: GraphModel,
    private readonly size: number,
    private readonly cv: OpenCvAddon,
  ) {}

  /** Load `movenet-<variant>` from the weights folder (see `tfjs.ts`). */
  static async load(cv: OpenCvAddon, variant: 'lightning' | 'thunder' = 'lightning'): Promise<MoveNet> {
    const model = await loadTfjsGraph(`movenet-${variant}`);
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
