import { AppError } from '../../models/errors';

/** Which check of the capture input failed (the message says what is wrong and how to fix it). */
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
  | 'no_athlete'
  /** a recording's trial folder cannot be created or written (permissions, read-only disk, a file in the way) */
  | 'unwritable_output';

/**
 * Bad capture input: an {@link AppError} with code `Validation` (HTTP 422: fix the input and
 * resend); `kind` says which check failed.
 */
export class CaptureInputError extends AppError {
  constructor(
    readonly kind: CaptureInputErrorCode,
    message: string,
  ) {
    super({ code: 'Validation', message, kind });
    this.name = 'CaptureInputError';
  }
}
