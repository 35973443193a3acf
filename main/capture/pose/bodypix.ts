/**
 * BodyPix (MobileNetV1 ×0.50, stride 16, ONNX; Apache-2.0) via onnxruntime-node, used as the
 * person detector: its person-segmentation mask gives one box per connected component.
 * I/O as documented in shared/data/models/README.md: input NHWC float32 in [−1, 1] with sides
 * 16k + 1; outputs at stride 16: `segments` logits, `heatmaps` logits (COCO-17),
 * `short_offsets` (17 y then 17 x, input pixels).
 */
import * as ort from 'onnxruntime-node';
import type { OpenCvAddon, RawImage } from '../native/index';
import type { Box } from './types';

const STRIDE = 16;

export interface BodyPixOutput {
  /** Person boxes in frame pixels, largest first. */
  boxes: Box[];
  /** Single-person keypoints (17×3, frame px) decoded from the heatmaps within each box. */
  keypoints: Float64Array[];
}

export class BodyPixDetector {
  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly cv: OpenCvAddon,
    private readonly longSide: number,
  ) {}

  /** Load the ONNX model (`longSide` = input size along the frame's long side, 16k + 1). */
  static async load(modelPath: string, cv: OpenCvAddon, longSide = 513): Promise<BodyPixDetector> {
    const session = await ort.InferenceSession.create(modelPath, { logSeverityLevel: 3, intraOpNumThreads: 1, interOpNumThreads: 1 });
    return new BodyPixDetector(session, cv, longSide);
  }

  async detect(frame: RawImage): Promise<BodyPixOutput> {
    const W = frame.width,
      H = frame.height;
    const s = (this.longSide - 1) / (Math.max(W, H) - 1);
    const inW = W >= H ? this.longSide : Math.round(((W - 1) * s) / STRIDE) * STRIDE + 1;
    const inH = H > W ? this.longSide : Math.round(((H - 1) * s) / STRIDE) * STRIDE + 1;
    const img = this.cv.cropResize(frame, 0, 0, W - 1, H - 1, inW, inH);
    const input = new Float32Array(inW * inH * 3);
    for (let i = 0; i < input.length; i++) input[i] = (img.data[i] ?? 0) / 127.5 - 1;
    const out = await this.session.run({ input: new ort.Tensor('float32', input, [1, inH, inW, 3]) });
    const seg = out.segments!.data as Float32Array,
      heat = out.heatmaps!.data as Float32Array,
      off = out.short_offsets!.data as Float32Array;
    const h = (inH - 1) / STRIDE + 1,
      w = (inW - 1) / STRIDE + 1;
    const sx = (W - 1) / (inW - 1),
      sy = (H - 1) / (inH - 1);
    const comps = components(seg, w, h);
    const boxes: Box[] = [],
      keypoints: Float64Array[] = [];
    for (const c of comps) {
      const box: Box = [
        Math.max(0, (c.x0 * STRIDE - STRIDE / 2) * sx),
        Math.max(0, (c.y0 * STRIDE - STRIDE / 2) * sy),
        Math.min(W - 1, (c.x1 * STRIDE + STRIDE / 2) * sx),
        Math.min(H - 1, (c.y1 * STRIDE + STRIDE / 2) * sy),
      ];
      boxes.push(box);
      const kp = new Float64Array(17 * 3);
      for (let k = 0; k < 17; k++) {
        let best = -Infinity,
          bi = 0;
        for (let y = c.y0; y <= c.y1; y++)
          for (let x = c.x0; x <= c.x1; x++) {
            const v = heat[(y * w + x) * 17 + k] ?? -Infinity;
            if (v > best) {
              best = v;
              bi = y * w + x;
            }
          }
        const cy = Math.floor(bi / w),
          cx = bi % w;
        kp[k * 3] = (cx * STRIDE + (off[bi * 34 + 17 + k] ?? 0)) * sx;
        kp[k * 3 + 1] = (cy * STRIDE + (off[bi * 34 + k] ?? 0)) * sy;
        kp[k * 3 + 2] = 1 / (1 + Math.exp(-best));
      }
      keypoints.push(kp);
    }
    return { boxes, keypoints };
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}

interface Component {
  size: number;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

/**
 * 4-connected components of `logits > 0` on a w×h grid. Components under 5 % of the largest are
 * merged into a bigger one whose box they touch (within 2 cells), else dropped; the rest are
 * people candidates when at least 15 % of the largest. Largest first.
 */
export function components(logits: ArrayLike<number>, w: number, h: number): Component[] {
  const label = new Int32Array(w * h).fill(-1);
  const comps: Component[] = [];
  const stack: number[] = [];
  for (let i = 0; i < w * h; i++) {
    if (label[i] !== -1 || !((logits[i] ?? 0) > 0)) continue;
    const c: Component = { size: 0, x0: w, y0: h, x1: -1, y1: -1 };
    const id = comps.length;
    comps.push(c);
    label[i] = id;
    stack.push(i);
    while (stack.length) {
      const p = stack.pop()!;
      const x = p % w,
        y = (p - x) / w;
      c.size++;
      c.x0 = Math.min(c.x0, x);
      c.x1 = Math.max(c.x1, x);
      c.y0 = Math.min(c.y0, y);
      c.y1 = Math.max(c.y1, y);
      for (const q of [x > 0 ? p - 1 : -1, x < w - 1 ? p + 1 : -1, y > 0 ? p - w : -1, y < h - 1 ? p + w : -1]) {
        if (q >= 0 && label[q] === -1 && (logits[q] ?? 0) > 0) {
          label[q] = id;
          stack.push(q);
        }
      }
    }
  }
  comps.sort((a, b) => b.size - a.size);
  const largest = comps[0]?.size ?? 0;
  const people = comps.filter((c) => c.size >= 0.15 * largest);
  for (const small of comps.filter((c) => c.size < 0.15 * largest && c.size >= 0.05 * largest)) {
    const host = people.find((p) => small.x0 <= p.x1 + 2 && small.x1 >= p.x0 - 2 && small.y0 <= p.y1 + 2 && small.y1 >= p.y0 - 2);
    if (host) {
      host.x0 = Math.min(host.x0, small.x0);
      host.y0 = Math.min(host.y0, small.y0);
      host.x1 = Math.max(host.x1, small.x1);
      host.y1 = Math.max(host.y1, small.y1);
      host.size += small.size;
    }
  }
  return people;
}
