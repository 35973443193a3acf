/**
 * Shapes of the capture workspace (main/capture/workspace.ts) as the contract carries them: a
 * recording's `trial.json` and a processing job with its stages. Runtime-agnostic (zod only).
 */
import { z } from 'zod';
import { CAPTURE_TESTS } from './series';

/** `trial.json` of a recording. */
export const RecordingMeta = z.object({
  id: z.string(),
  org_id: z.string(),
  athlete_id: z.string(),
  test: z.enum(CAPTURE_TESTS),
  recorded_at: z.string(),
  created_by: z.string(),
  /** `live` = recorded in the app from cameras (or files standing in for them); `import` = a trial folder copied in. */
  origin: z.enum(['live', 'import']),
  cameras: z.array(z.string()),
  /** The one tap that marks the athlete (camera name, pixels in its first frame); null = the largest person. */
  tap: z.object({ camera: z.string(), x: z.number(), y: z.number() }).nullable(),
  rig_id: z.string().nullable(),
  status: z.enum(['recording', 'recorded', 'processing', 'processed', 'failed']),
  session_id: z.string().nullable(),
  last_error: z.object({ stage: z.string(), code: z.string(), message: z.string() }).nullable(),
});
export type RecordingMeta = z.infer<typeof RecordingMeta>;

/** A recording as the app lists it. */
export interface RecordingView extends RecordingMeta {
  /** Videos (file names) and whether 2D keypoint files came with the recording. */
  videos: string[];
  has_keypoints: boolean;
}

/** One stage of a processing job (`pose:cam01` is camera cam01's 2D pose). */
export interface JobStage {
  name: string;
  label: string;
  done: number;
  total: number;
}

/** A processing job as the app sees it. */
export interface JobView {
  id: string;
  recording_id: string;
  status: 'running' | 'complete' | 'failed' | 'cancelled';
  stages: JobStage[];
  /** The stage that failed, its code and the message (failed jobs). */
  error: { stage: string; code: string; message: string } | null;
  session_id: string | null;
  started_at: string;
  /** Seconds from start to the results being stored (or to the failure or cancel). */
  seconds: number | null;
}
