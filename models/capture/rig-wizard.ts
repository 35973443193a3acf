/**
 * The rig set-up and calibration wizard (issue 15): the shapes shared by main
 * (`main/capture/live/wizard.ts`, `main/ipc/capture-rig.ts`) and the Capture page's
 * "Rig & calibration" tab, and the few constants both sides show.
 * Units: pixels for image coordinates and reprojection errors, millimetres for board squares,
 * degrees for yaw and drift, metres for translations.
 */
import type { DeclaredLayout, RigDriftReport } from './obliquity';

/**
 * Intrinsic reprojection RMS below this (px) is "good", otherwise "poor". Source: the calibration
 * target in shared/design/capture.md ("reprojection RMS reported; target under 0.5 px").
 */
export const RMS_GOOD_BELOW_PX = 0.5;

/** Band of an intrinsic reprojection RMS. */
export type RmsBand = 'good' | 'poor';

/** Declared camera places a user picks from, with their yaw (deg; 0 = the athlete's front, + toward the athlete's left). */
export const LAYOUT_CHOICES = [
  { label: 'front', yaw_deg: 0 },
  { label: 'left 45°', yaw_deg: 45 },
  { label: 'left side', yaw_deg: 90 },
  { label: 'left 135°', yaw_deg: 135 },
  { label: 'back', yaw_deg: 180 },
  { label: 'right 135°', yaw_deg: -135 },
  { label: 'right side', yaw_deg: -90 },
  { label: 'right 45°', yaw_deg: -45 },
] as const;

/** A checkerboard as the page sets it: inner corners and square side (mm). */
export interface BoardSetting {
  cols: number;
  rows: number;
  square_mm: number;
}

/** Whether a camera's current detection was kept as a board view, and why not. */
export interface CalibrationViewStatus {
  camera: number;
  kept: boolean;
  reason: string | null;
}

/** One camera in the wizard. */
export interface WizardCameraState {
  index: number;
  name: string;
  width: number;
  height: number;
  /** The newest detection: which frame, which board was looked for, whether it was found, worker time (ms), age (ms). */
  detection: { frame_index: number; board: 'intrinsics' | 'extrinsics'; found: boolean; ms: number; age_ms: number } | null;
  error: string | null;
  /** Board views kept for intrinsics. */
  views: number;
  /** Source frame index of each kept view (the frame it was detected in). */
  view_frames: number[];
  /** Views covering each cell of the image grid (row-major, `coverage_grid` cells). */
  coverage: number[];
  /** Fraction of grid cells covered by at least one view (0–1). */
  coverage_fraction: number;
  intrinsics: {
    source: 'board' | 'imported';
    /** Reprojection RMS over all corners (px); null when imported (the file does not say). */
    rms_px: number | null;
    band: RmsBand | null;
    per_view_rms_px: number[];
    views: number;
    fx: number;
    fy: number;
    cx: number;
    cy: number;
    solved_at: string;
  } | null;
  extrinsics: {
    source: 'board' | 'imported';
    /** PnP reprojection RMS on the floor board (px); null when imported. */
    rms_px: number | null;
    /** World→camera Rodrigues rotation (rad) and translation (m). */
    rvec: [number, number, number];
    tvec: [number, number, number];
    solved_at: string;
  } | null;
}

/** The wizard as the page polls it (`capture.rigWizard`). */
export interface CalibrationWizardState {
  phase: 'intrinsics' | 'extrinsics';
  auto_capture: boolean;
  intrinsic_board: BoardSetting;
  extrinsic_board: BoardSetting;
  rms_good_below_px: number;
  coverage_grid: { cols: number; rows: number };
  cameras: WizardCameraState[];
  /** Every camera has intrinsics and a pose. */
  complete: boolean;
  /** The last layout check. */
  layout: { declared: DeclaredLayout; tolerance_deg: number; report: RigDriftReport } | null;
}
