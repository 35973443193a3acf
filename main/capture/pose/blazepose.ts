/**
 * BlazePose GHUM 3D landmark model (Google MediaPipe, Apache-2.0; TF.js graph converted from
 * MediaPipe's `pose_landmark_{lite,full}` by V. Mandic, shipped in `weights/`) on a person box,
 * TF.js WASM backend. 33 landmarks including heel and foot index (Bazarevsky et al. 2020,
 * "BlazePose: On-device Real-time Body Pose tracking", arXiv:2006.10204).
 *
 * Input: float32 [1, 256, 256, 3], RGB / 255, from a square crop around the person (MediaPipe's
 * ROI is the detector's body box ×1.25, rotated upright; here the BodyPix box grown ×1.25, not
 * rotated: the athlete is upright in a clinic). Outputs used: `ld_3d` [1, 195] = 39 × (x, y, z,
 * visibility logit, presence logit), x and y in input pixels (the first 33 are the landmarks),
 * `output_poseflag` [1, 1] = probability that a person is in the crop. Auxiliary points 33 (body
 * centre, between the hips) and 34 (the body-scale point) give MediaPipe's tracking ROI: a square of
 * side 2 · |p33 − p34| · 1.25 centred on p33 (`pose_landmark` graph, AlignmentPointsRects +
 * RectTransformation scale 1.25; rotation not applied here). The model runs once on the person box,
 * then again on the ROI its own first pass gives (the box from a segmentation mask is often cut off
 * in extreme poses; the ROI is what the model was trained on).
 * Keypoint confidence = sigmoid(visibility) × person probability (0..1).
 */
import * as tf from '@tensorflow/tfjs-core';
import type { GraphModel } from '@tensorflow/tfjs-converter';
import { BLAZEPOSE33 } from '../../../models/capture/keypoints';
import type { OpenCvAddon, RawImage } from '../native/index';
import { loadTfjsGraph } from './tfjs';
import type { Box } from './types';

const SIZE = 256;
const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

export class BlazePose {
  /** Keypoints per person: BlazePose-33 order (`BLAZEPOSE33`). */
  static readonly keypoints = BLAZEPOSE33.length;
  private constructor(
    private readonly model: GraphModel,
    private readonly cv: OpenCvAddon,
  ) {}

  /** Load `blazepose-<variant>` from the weights folder (see `tfjs.ts`). */
  static async load(cv: OpenCvAddon, variant: 'lite' | 'full' | 'heavy' = 'full'): Promise<BlazePose> {
    return new BlazePose(await loadTfjsGraph(`blazepose-${variant}`), cv);
  }

  /** Keypoints (33×3: x px, y px, confidence 0..1, frame pixels) of the person in `box`: a pass on the box (grown ×1.25, square, upright), then `passes − 1` on the rotated ROI the previous pass gives. */
  async estimate(frame: RawImage, box: Box, passes = 2): Promise<Float64Array> {
    const side = Math.max(box[2] - box[0], box[3] - box[1]) * 1.25;
    let out = await this.run(frame, { cx: (box[0] + box[2]) / 2, cy: (box[1] + box[3]) / 2, side, angle: 0 });
    for (let p = 1; p < passes && out.roi; p++) out = await this.run(frame, out.roi);
    return out.keypoints;
  }

  /** One pass on a square ROI: the 33 keypoints (frame pixels) and the next ROI from aux points 33/34 (null when no person or degenerate). */
  private async run(frame: RawImage, roi: Roi): Promise<{ keypoints: Float64Array; roi: Roi | null }> {
    const input = tf.tensor4d(rotatedCrop(frame, roi, SIZE), [1, SIZE, SIZE, 3], 'float32');
    const outs = this.model.execute(input, ['Identity_2:0', 'Identity_3:0']) as tf.Tensor[];
    const [ld, flag] = (await Promise.all(outs.map((t) => t.data()))) as Float32Array[];
    input.dispose();
    for (const t of outs) t.dispose();
    const person = flag![0] ?? 0;
    const toFrame = (k: number) => fromRoi(roi, SIZE, ld![k * 5] ?? 0, ld![k * 5 + 1] ?? 0);
    const K = BLAZEPOSE33.length;
    const out = new Float64Array(K * 3);
    for (let k = 0; k < K; k++) {
      const [fx, fy] = toFrame(k);
      out[k * 3] = fx;
      out[k * 3 + 1] = fy;
      out[k * 3 + 2] = sigmoid(ld![k * 5 + 3] ?? -Infinity) * person;
    }
    const [cx, cy] = toFrame(33),
      [sx, sy] = toFrame(34);
    const len = Math.hypot(sx - cx, sy - cy);
    const next: Roi | null = person >= 0.5 && len > 8 ? { cx, cy, side: 2 * len * 1.25, angle: Math.atan2((sx - cx) / len, -(sy - cy) / len) } : null;
    return { keypoints: out, roi: next };
  }

  dispose(): void {
    this.model.dispose();
  }
}

/** A square region of the frame: centre (px), side (px), and rotation (radians) of its "up" from the frame's up, clockwise. */
export interface Roi {
  cx: number;
  cy: number;
  side: number;
  angle: number;
}

/** Frame pixel of the point (x, y) in an S×S crop of `roi` (pixel-edge convention: 0..S). */
export function fromRoi(roi: Roi, S: number, x: number, y: number): [number, number] {
  const ox = (x / S - 0.5) * roi.side,
    oy = (y / S - 0.5) * roi.side;
  const c = Math.cos(roi.angle),
    s = Math.sin(roi.angle);
  return [roi.cx + c * ox - s * oy, roi.cy + s * ox + c * oy];
}

/** S×S×3 float32 RGB / 255 crop of `roi` from an RGB frame, bilinear; outside the frame is black. */
export function rotatedCrop(frame: RawImage, roi: Roi, S: number): Float32Array {
  const out = new Float32Array(S * S * 3);
  const { width: W, height: H, data } = frame;
  const ch = frame.channels || 3;
  const c = Math.cos(roi.angle),
    s = Math.sin(roi.angle),
    step = roi.side / S;
  for (let i = 0; i < S; i++) {
    const oy = (i + 0.5) * step - roi.side / 2;
    for (let j = 0; j < S; j++) {
      const ox = (j + 0.5) * step - roi.side / 2;
      // pixel centres at integer coordinates
      const x = roi.cx + c * ox - s * oy - 0.5,
        y = roi.cy + s * ox + c * oy - 0.5;
      const x0 = Math.floor(x),
        y0 = Math.floor(y);
      if (x0 < 0 || y0 < 0 || x0 + 1 >= W || y0 + 1 >= H) continue;
      const fx = x - x0,
        fy = y - y0;
      const a = (y0 * W + x0) * ch,
        b = a + ch,
        d = a + W * ch,
        e = d + ch;
      const o = (i * S + j) * 3;
      for (let k = 0; k < 3; k++)
        out[o + k] = ((data[a + k]! * (1 - fx) + data[b + k]! * fx) * (1 - fy) + (data[d + k]! * (1 - fx) + data[e + k]! * fx) * fy) / 255;
    }
  }
  return out;
}
