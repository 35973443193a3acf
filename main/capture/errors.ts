/** Bad input to the capture command: the message says what is wrong and how to fix it. */
export type CaptureInputErrorCode =
  | 'missing_camera'
  | 'frame_count_mismatch'
  | 'fps_mismatch'
  | 'size_mismatch'
  | 'empty_video'
  | 'unreadable_video'
  | 'no_input'
  | 'bad_keypoints'
  | 'bad_calibration'
  | 'bad_argument'
  | 'no_athlete';

export class CaptureInputError extends Error {
  constructor(
    readonly code: CaptureInputErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'CaptureInputError';
  }
}
