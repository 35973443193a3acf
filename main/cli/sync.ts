/**
 * `npm run cli -- enrol …` and `npm run cli -- sync …`: the device sync engine (main/sync/engine.ts)
 * from the command line.
 *
 *   enrol --db FILE --hq URL --as EMAIL --pin PIN --code CODE [--name DEVICE]
 *       Sign this database in at HQ (creates FILE when missing: migrated, empty, no demo seed).
 *   sync --db FILE [--watch]
 *       One pass (upload the outbox, pull every shape to up-to-date; prints what moved as JSON, with
 *       each changeset HQ rejected in it: id, verb, reason, message), or
 *       with --watch stay live until SIGINT/SIGTERM, printing one JSON line per status change.
 *
 * Exit codes: 0 ok; typed errors as JSON on stderr with 2 Validation, 3 Forbidden, 4 NotFound,
 * 5 Conflict, 6 Unavailable (HQ unreachable), 7 Unauthenticated (wrong PIN, revoked token),
 * 8 NotConfigured (not enrolled), 10 RateLimited (PIN lockout, HQ's limits), 1 other.
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { AppError, toErrorPayload, type ErrorCode } from '../../models/errors';
import { exitCodeFor } from './exit-codes';
import { openDb, type Db } from '../data/db';
import { DeviceSync } from '../sync/engine';

interface Io {
  out(text: string): void;
  err(text: string): void;
}

function fail(io: Io, e: unknown): number {
  const payload = toErrorPayload(e);
  if (payload.code === 'Internal' && e instanceof Error && !(e instanceof AppError)) payload.message = `${payload.message} (${e.message})`;
  io.err(JSON.stringify(payload));
  return exitCodeFor(payload.code);
}

const need = (v: string | undefined, what: string): string => {
  if (!v) throw new AppError({ code: 'Validation', message: `${what} is required. Run \`npm run cli -- help\` for usage.` });
  return v;
};

/** `enrol`: sign the database at --db in at HQ as --as with --pin and the one-time sign-in --code. */
export async function enrolCommand(args: string[], io: Io): Promise<number> {
  let db: Db | null = null;
  try {
    const { values } = parseArgs({
      args,
      options: {
        db: { type: 'string' },
        hq: { type: 'string' },
        as: { type: 'string' },
        pin: { type: 'string' },
        code: { type: 'string' },
        name: { type: 'string' },
      },
      strict: true,
    });
    const path = resolve(need(values.db, '--db FILE'));
    const hqUrl = need(values.hq, '--hq URL');
    const email = need(values.as, '--as EMAIL');
    const pin = need(values.pin, '--pin PIN');
    const code = need(
      values.code,
      '--code CODE (a one-time HQ sign-in code from a club owner or administrator, or `npm run hq -- enrolment-code` on the HQ machine)',
    );
    const created = !existsSync(path);
    db = openDb(path);
    const engine = await DeviceSync.enrol(db, { hqUrl, email, pin, code, deviceName: values.name ?? `CLI on ${hostname()}` });
    const s = engine.status();
    io.out(JSON.stringify({ db: path, created, enrolled: s.enrolled, hq_url: s.hq_url, device_id: s.device_id }, null, 2));
    return 0;
  } catch (e) {
    return fail(io, e);
  } finally {
    db?.close();
  }
}

/** `sync`: one pass, or `--watch` to stay live until a signal. */
export async function syncCommand(args: string[], io: Io, opts: { signal?: AbortSignal } = {}): Promise<number> {
  let db: Db | null = null;
  try {
    const { values } = parseArgs({ args, options: { db: { type: 'string' }, watch: { type: 'boolean', default: false } }, strict: true });
    const path = resolve(need(values.db, '--db FILE'));
    if (!existsSync(path))
      throw new AppError({
        code: 'NotFound',
        message: `No database at ${path}. Enrol one first: \`npm run cli -- enrol --db ${path} --hq URL --as EMAIL --pin PIN --code CODE\`.`,
      });
    db = openDb(path);
    const engine = new DeviceSync(db, { log: (l) => io.err(l) });
    if (!values.watch) {
      const started = new Date().toISOString();
      const report = await engine.syncOnce();
      // Each changeset HQ rejected in this pass: which, why, and where it is resolved.
      const rejected = engine
        .conflicts()
        .filter((c) => c.rejected_at >= started)
        .map((c) => ({ changeset_id: c.changeset_id, verb: c.verb, reason: c.reason, message: c.message }));
      const out = rejected.length
        ? {
            ...report,
            rejected_changesets: rejected,
            resolve:
              "Nothing of these was written at HQ; they stay on this device as sync conflicts. Open the app's Sync conflicts page to re-plan or discard each.",
          }
        : report;
      io.out(JSON.stringify(out, null, 2));
      for (const r of rejected) io.err(`sync: rejected ${r.changeset_id} (${r.verb}): ${r.reason}: ${r.message}`);
      return 0;
    }
    // Live: one JSON status line per change; stop on SIGINT/SIGTERM (or the caller's signal).
    const stopSignal = opts.signal ?? signalOnProcessStop();
    engine.onChange((s) => io.out(JSON.stringify(s)));
    engine.start();
    io.out(JSON.stringify(engine.status()));
    await new Promise<void>((res) => {
      if (stopSignal.aborted) return res();
      stopSignal.addEventListener('abort', () => res(), { once: true });
      const timer = setInterval(() => {
        if (!engine.isLive) {
          clearInterval(timer);
          res();
        }
      }, 250);
      stopSignal.addEventListener('abort', () => clearInterval(timer), { once: true });
    });
    const stoppedByError = !engine.isLive && !stopSignal.aborted;
    await engine.stop();
    const last = engine.status().last_error;
    if (stoppedByError && last) {
      io.err(JSON.stringify(last));
      return exitCodeFor(last.code as ErrorCode);
    }
    return 0;
  } catch (e) {
    return fail(io, e);
  } finally {
    db?.close();
  }
}

function signalOnProcessStop(): AbortSignal {
  const ctrl = new AbortController();
  const stop = (): void => ctrl.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return ctrl.signal;
}
