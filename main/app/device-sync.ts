/**
 * The app hosts' device sync: {@link AppSync} (main/app/sync-runner.ts) over the real engine
 * (main/sync/engine.ts `DeviceSync`). Both the Electron main and the web host call
 * {@link startAppSync} after opening the database, and `close()` it on shutdown.
 */
import type { Db } from '../data/db';
import { DeviceSync } from '../sync/engine';
import { AppSync, type SyncEngineFactory } from './sync-runner';

/** The engine factory the app uses (the engine's own defaults: back-off, polling, slices). */
export function deviceSyncFactory(log?: (line: string) => void): SyncEngineFactory {
  const opts = log ? { log } : {};
  return {
    open: (db) => new DeviceSync(db, opts),
    enrol: (db, input) => DeviceSync.enrol(db, input, opts),
  };
}

/**
 * Create the app's background sync for `db` and start it when the database is enrolled.
 * `log` receives diagnostics only (never a token, PIN or record content).
 */
export function startAppSync(db: Db, log?: (line: string) => void): AppSync {
  const sync = new AppSync(db, deviceSyncFactory(log), log ? { log } : {});
  sync.startIfEnrolled();
  return sync;
}
