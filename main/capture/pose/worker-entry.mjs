// Worker bootstrap: registers tsx's TypeScript loader in this thread, then runs worker.ts.
// (Node 20 does not pass `--import tsx` to worker threads.)
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
