/**
 * A real device process for the kill -9 tests: opens the device file and runs one sync pass;
 * with `--kill-at POINT --kill-after N` it SIGKILLs itself the N-th time the engine reaches that
 * durable step (see DeviceSyncOptions.trace), i.e. dies mid-upload or mid-apply exactly there.
 *
 *   npx tsx main/sync/testing/sync-child.ts --db FILE [--kill-at apply:slice --kill-after 3] [--slice 50] [--batch 5]
 *
 * Prints the SyncReport as JSON when it finishes.
 */
import { parseArgs } from 'node:util';
import { openDb } from '../../data/db';
import { DeviceSync } from '../engine';

const { values } = parseArgs({
  options: { db: { type: 'string' }, 'kill-at': { type: 'string' }, 'kill-after': { type: 'string' }, slice: { type: 'string' }, batch: { type: 'string' } },
});
const killAt = values['kill-at'];
let remaining = Number(values['kill-after'] ?? 1);
const db = openDb(values.db!);
const engine = new DeviceSync(db, {
  applySliceRows: Number(values.slice ?? 500),
  uploadBatch: Number(values.batch ?? 50),
  trace: (point) => {
    if (point === killAt && --remaining === 0) process.kill(process.pid, 'SIGKILL');
  },
});
engine.syncOnce().then(
  (r) => {
    process.stdout.write(`${JSON.stringify(r)}\n`);
    db.close();
    // Not waiting for the event loop to empty: the shape client keeps a 60 s timer (see main/cli/index.ts).
    process.stdout.write('', () => process.exit(0));
  },
  (e: unknown) => {
    process.stderr.write(`${JSON.stringify({ error: String((e as Error).message) })}\n`);
    db.close();
    process.stderr.write('', () => process.exit(1));
  },
);
