// Worker bootstrap for rig calibration: registers tsx's TypeScript loader in this thread, then runs
// calib-worker.ts (the same pattern as pose/worker-entry.mjs).
import { register } from 'tsx/esm/api';

register();
await import('./calib-worker.ts');
