/**
 * `createPoseEstimator(spec)`: the one interface over the 2D pose models. Top-down models run on
 * BodyPix person boxes; after a first pass the box is re-derived from the confident keypoints
 * and the model runs again when that box disagrees with the detector's (BodyPix boxes cut off
 * limbs in extreme poses; see shared/data/models/README.md).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { personBox } from '../../../models/capture/openpose';
import { openCvAddon } from '../native/index';
import { BlazePose } from './blazepose';
import { BodyPixDetector } from './bodypix';
import { cropBox, fromCrop, iou } from './geometry';
import { MoveNet } from './movenet';
import { decodeSimcc } from './simcc';
import type { Box, Keypoints2D, PoseEstimator, PoseEstimatorSpec, RawImage } from './types';

/** Default BodyPix location: `<repo>/../shared/data/models/bodypix/…` or ATHLETE_BODYPIX_MODEL. */
export function defaultBodyPixPath(): string {
  if (process.env.ATHLETE_BODYPIX_MODEL) return process.env.ATHLETE_BODYPIX_MODEL;
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
  return path.resolve(root, '../shared/data/models/bodypix/MobileNetV1-x050-stride16.onnx');
}

function requireModel(p: string, what: string): string {
  if (!existsSync(p)) throw new Error(`${what} not found at ${p} (set ATHLETE_BODYPIX_MODEL or pass the model path)`);
  return p;
}

type TopDown = (frame: RawImage, box: Box) => Promise<Float64Array>;

async function twoPass(frame: RawImage, box: Box, run: TopDown): Promise<Float64Array> {
  const first = await run(frame, box);
  const kb = personBox(first, 0.3);
  if (!kb) return first;
  const grown = cropBox(kb, (kb[2] - kb[0]) / Math.max(1, kb[3] - kb[1]), 1.1);
  if (iou(grown, box) > 0.7) return first;
  const union: Box = [Math.min(box[0], grown[0]), Math.min(box[1], grown[1]), Math.max(box[2], grown[2]), Math.max(box[3], grown[3])];
  return run(frame, union);
}

/** Create a pose estimator (runs in the calling thread; use `estimateVideoPoses` for workers). */
export async function createPoseEstimator(spec: PoseEstimatorSpec): Promise<PoseEstimator> {
  const cv = openCvAddon();
  const detector = await BodyPixDetector.load(requireModel(spec.bodypixPath ?? defaultBodyPixPath(), 'BodyPix person detector'), cv);
  if (spec.kind === 'bodypix') {
    return {
      name: 'bodypix-x050-s16',
      async estimate(frame) {
        return (await detector.detect(frame)).keypoints;
      },
      async dispose() {
        await detector.dispose();
      },
    };
  }
  if (spec.kind === 'blazepose') {
    const bp = await BlazePose.load(cv, spec.variant ?? 'full');
    return {
      name: `blazepose-${spec.variant ?? 'full'}+bodypix-box`,
      async estimate(frame) {
        const { boxes } = await detector.detect(frame);
        const out: Keypoints2D[] = [];
        // BlazePose re-crops on its own ROI (aux points 33/34) instead of the keypoint-box second pass
        for (const b of boxes) out.push(await bp.estimate(frame, b));
        return out;
      },
      async dispose() {
        bp.dispose();
        await detector.dispose();
      },
    };
  }
  if (spec.kind === 'movenet') {
    const mn = await MoveNet.load(cv, spec.variant ?? 'lightning');
    return {
      name: `movenet-${spec.variant ?? 'lightning'}+bodypix-box`,
      async estimate(frame) {
        const { boxes } = await detector.detect(frame);
        const out: Keypoints2D[] = [];
        for (const b of boxes) out.push(await twoPass(frame, b, (f, bx) => mn.estimate(f, bx)));
        return out;
      },
      async dispose() {
        mn.dispose();
        await detector.dispose();
      },
    };
  }
  const simcc = await OnnxSimccModel.load(spec);
  return {
    name: `onnx-simcc:${path.basename(spec.modelPath)}+bodypix-box`,
    async estimate(frame) {
      const { boxes } = await detector.detect(frame);
      const out: Keypoints2D[] = [];
      for (const b of boxes) out.push(await twoPass(frame, b, (f, bx) => simcc.estimate(f, bx)));
      return out;
    },
    async dispose() {
      await simcc.dispose();
      await detector.dispose();
    },
  };
}

/**
 * A clinic-installed top-down ONNX model with SimCC outputs (RTMPose-style): input NCHW float32
 * normalised as (RGB − mean)/std (RTMPose defaults), outputs the first two tensors as
 * simcc_x [1, K, W·r], simcc_y [1, K, H·r]. Input size from the model when static.
 */
export class OnnxSimccModel {
  private constructor(
    private readonly session: ort.InferenceSession,
    private readonly spec: Extract<PoseEstimatorSpec, { kind: 'onnx-simcc' }>,
    readonly inW: number,
    readonly inH: number,
  ) {}

  static async load(spec: Extract<PoseEstimatorSpec, { kind: 'onnx-simcc' }>): Promise<OnnxSimccModel> {
    if (!existsSync(spec.modelPath)) throw new Error(`pose model not found: ${spec.modelPath}`);
    const session = await ort.InferenceSession.create(spec.modelPath, { logSeverityLevel: 3, intraOpNumThreads: 1, interOpNumThreads: 1 });
    if (session.outputNames.length < 2)
      throw new Error(`${spec.modelPath}: a SimCC model needs two outputs (simcc_x, simcc_y), found ${session.outputNames.join(', ')}`);
    const meta = session.inputMetadata[0];
    const shape = meta && 'shape' in meta ? (meta.shape as (number | string)[]) : [];
    const dimH = typeof shape[2] === 'number' ? shape[2] : undefined,
      dimW = typeof shape[3] === 'number' ? shape[3] : undefined;
    const inW = spec.inputWidth ?? dimW ?? 192,
      inH = spec.inputHeight ?? dimH ?? 256;
    return new OnnxSimccModel(session, spec, inW, inH);
  }

  /** Keypoints (K×3, frame px) of the person in `box` (grown ×1.25, padded to the input aspect). */
  async estimate(frame: RawImage, box: Box): Promise<Float64Array> {
    const { inW, inH } = this;
    const crop = cropBox(box, inW / inH, 1.25);
    const img = openCvAddon().cropResize(frame, crop[0], crop[1], crop[2], crop[3], inW, inH);
    const mean = this.spec.mean ?? [123.675, 116.28, 103.53],
      std = this.spec.std ?? [58.395, 57.12, 57.375];
    const input = new Float32Array(3 * inW * inH);
    for (let i = 0; i < inW * inH; i++) for (let c = 0; c < 3; c++) input[c * inW * inH + i] = ((img.data[i * 3 + c] ?? 0) - mean[c]!) / std[c]!;
    const out = await this.session.run({ [this.session.inputNames[0]!]: new ort.Tensor('float32', input, [1, 3, inH, inW]) });
    const x = out[this.session.outputNames[0]!]!,
      y = out[this.session.outputNames[1]!]!;
    const K = Number(x.dims[1]);
    const kp = decodeSimcc(x.data as Float32Array, y.data as Float32Array, K, this.spec.splitRatio ?? 2);
    for (let k = 0; k < K; k++) {
      const [fx, fy] = fromCrop(crop, inW, inH, kp[k * 3] ?? 0, kp[k * 3 + 1] ?? 0);
      kp[k * 3] = fx;
      kp[k * 3 + 1] = fy;
    }
    return kp;
  }

  async dispose(): Promise<void> {
    await this.session.release();
  }
}
