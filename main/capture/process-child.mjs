// Child-process bootstrap for processing a recording: registers tsx's TypeScript loader, then runs
// process-child.ts (the same pattern as pose/worker-entry.mjs).
import { register } from 'tsx/esm/api';

register();
await import('./process-child.ts');
