/** Shared test data location (`../shared/data` relative to the repository root). */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
/** `<repo>/../shared/data`, overridable with ATHLETE_SHARED_DATA. */
export const SHARED_DATA = process.env.ATHLETE_SHARED_DATA ?? path.resolve(root, '../shared/data');
export const DEMO = path.join(SHARED_DATA, 'pose2sim-demo');
export const DEMO_CALIB = path.join(DEMO, 'S00_Calibration', 'Calib_qualisys.toml');
export const BALANCING = path.join(DEMO, 'S00_P00_SingleParticipant', 'S00_P00_T01_BalancingTrial');
export const STATIC_TRIAL = path.join(DEMO, 'S00_P00_SingleParticipant', 'S00_P00_T00_StaticTrial');
/** The multi-person trial (two participants; no videos, OpenPose JSON only). */
export const MULTI = path.join(DEMO, 'S00_P01_MultiParticipants', 'S00_P01_T02_Participants1-2');
export const BODYPIX = path.join(SHARED_DATA, 'models', 'bodypix', 'MobileNetV1-x050-stride16.onnx');
export const hasDemo = existsSync(DEMO_CALIB) && existsSync(BALANCING);
export const hasBodyPix = existsSync(BODYPIX);
/** Message used in skipped suite names. */
export const NO_DEMO = `skipped: ${DEMO} is absent (shared test data; see shared/data/pose2sim-demo/README.md)`;
export const REPO_ROOT = root;
