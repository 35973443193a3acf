// Worker bootstrap when running from source (tsx, vitest): registers tsx's TypeScript loader in
// this thread, then runs shape-worker.ts. (Node 20 does not pass `--import tsx` to worker threads.)
// A bundled build runs shape-worker.js directly.
import { register } from 'tsx/esm/api';

register();
await import('./shape-worker.ts');
