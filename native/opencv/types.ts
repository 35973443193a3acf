/**
 * Typings of the OpenCV addon (`build/Release/opencv.node`, Debian libopencv-dev 4.x via pkg-config).
 * Pixel coordinates follow OpenCV: origin at the top-left pixel's centre, x right, y down.
 */

/** 8-bit image, row-major, RGB (channels 3) or grey (channels 1). */
export interface RawImage {
  data: Uint8Array;
  width: number;
  height: number;
  channels: number;
}

/** One decoded video frame (RGB). */
export type DecodedFrame = RawImage;

/** Container properties reported by OpenCV's FFmpeg backend. */
export interface VideoInfo {
  width: number;
  height: number;
  fps: number;
  /** As stored in the container; count with `skip` for the decoded number. */
  frameCount: number;
  backend: string;
}

export interface ChessboardCalibration {
  /** Reprojection RMS over all corners (px). */
  rms: number;
  /** 3×3 row-major intrinsics (px). */
  K: Float64Array;
  /** [k1, k2, p1, p2, k3]. */
  dist: Float64Array;
  /** Per view Rodrigues vector (board→camera). */
  rvecs: Float64Array[];
  /** Per view translation (board units, e.g. metres). */
  tvecs: Float64Array[];
}

export interface VideoReaderInstance {
  info(): VideoInfo;
  /** Next frame (RGB), or null at the end / on a decode failure. */
  read(): DecodedFrame | null;
  /** Grab up to n frames without converting; returns how many were grabbed. */
  skip(n: number): number;
  close(): void;
}

export interface OpenCvAddon {
  /** OpenCV version string (e.g. "4.6.0"). */
  version: string;
  /**
   * `cv::findChessboardCorners` + `cv::cornerSubPix` (11×11 window). `cols`×`rows` are inner corners.
   * Returns cols·rows·2 pixel coordinates in OpenCV's corner order, or null when not found.
   * `maxWidth` (px, optional): detect on a copy downscaled to that width (fast, for a live overlay),
   * then refine the corners sub-pixel on the full-resolution image.
   */
  findChessboard(image: string | RawImage, cols: number, rows: number, maxWidth?: number): Float64Array | null;
  /** `cv::imdecode` of JPEG/PNG bytes → RGB. Throws `ERR_OPENCV` when the bytes are not an image. */
  decodeImage(bytes: Uint8Array): RawImage;
  /** `cv::calibrateCamera` over views of M×3 board points and M×2 pixel points. */
  calibrateCamera(objectPoints: Float64Array[], imagePoints: Float64Array[], width: number, height: number, flags?: number): ChessboardCalibration;
  /** `cv::solvePnP` (iterative) + reprojection RMS (px); null when it fails. */
  solvePnP(
    objectPoints: Float64Array,
    imagePoints: Float64Array,
    K: Float64Array,
    dist: Float64Array,
  ): { rvec: Float64Array; tvec: Float64Array; rms: number } | null;
  /** `cv::imencode` of an RGB (or grey) image → JPEG bytes at `quality` 1..100 (default 90). RangeError for a bad quality or image. */
  encodeJpeg(image: RawImage, quality?: number): Uint8Array;
  /** `cv::imread` → RGB. Throws when unreadable. */
  readImage(path: string): RawImage;
  /** Bilinear crop of the box [x0,x1]×[y0,y1] (align-corners) to outW×outH RGB; outside the image is black. */
  cropResize(image: RawImage, x0: number, y0: number, x1: number, y1: number, outW: number, outH: number): RawImage;
  /** Write RGB frames to a video file with `cv::VideoWriter` (e.g. fourcc "MJPG" in .avi). */
  writeVideo(path: string, fourcc: string, fps: number, frames: RawImage[]): void;
  /** Sequential reader over a video file (`cv::VideoCapture`, FFmpeg backend: H.264, VP9, …). Throws when it cannot open. */
  VideoReader: new (path: string) => VideoReaderInstance;
}
