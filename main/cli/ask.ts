/**
 * `npm run cli -- ask --db PATH --as EMAIL [--conversation ID] [--page PATH] [--approve all|none] "message"`
 *
 * The headless driver of the assistant: runs one turn as that user, prints every AG-UI event as
 * one JSON line on stdout (`{"id":"3","type":"TEXT_MESSAGE_CONTENT",…}`), then the answer as a
 * final JSON line `{"answer":…,"runId":…,"conversationId":…,"status":…}`. Proposed changes are
 * approved (`--approve all`) or declined (`--approve none`, the default). Exit 0 when the run
 * completes; otherwise the exit code of its error (2 Validation, 3 Forbidden, 4 NotFound,
 * 5 Conflict, 1 other), with the typed error JSON on stderr.
 */
import { EventType } from '@ag-ui/core';
import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { ErrorCode, ErrorPayload } from '../../models/errors';
import { exitCodeFor } from './exit-codes';
import { isErrorCode, toErrorPayload } from '../../models/errors';
import { openDb } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { defaultToolRegistry } from '../kinetix/catalogue';
import { KINETIX_EVENTS } from '../kinetix/events';
import { redactText } from '../kinetix/mask';
import { Kinetix, type KinetixOptions } from '../kinetix/harness';

/** Where `ask` writes (injectable for in-process tests). */
export interface AskIo {
  out(line: string): void;
  err(line: string): void;
}

const STD_IO: AskIo = {
  out: (l) => process.stdout.write(`${l}\n`),
  err: (l) => process.stderr.write(`${l}\n`),
};

function fail(io: AskIo, p: ErrorPayload): number {
  io.err(JSON.stringify(p));
  return exitCodeFor(p.code);
}

/**
 * Run the `ask` command. Never calls process.exit.
 * @param argv arguments after `ask`
 * @param overrides harness options for tests (provider factory, env, limits)
 * @returns the exit code
 */
export async function askCommand(argv: string[], sink: AskIo = STD_IO, overrides: Partial<Omit<KinetixOptions, 'db'>> = {}): Promise<number> {
  // Every printed line passes the one redactor (kinetix/mask.ts) as a last line: no credential is ever printed.
  const io: AskIo = { out: (l) => sink.out(redactText(l)), err: (l) => sink.err(redactText(l)) };
  let values: { db?: string; as?: string; conversation?: string; page?: string; approve?: string };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: argv,
      options: {
        db: { type: 'string' },
        as: { type: 'string' },
        conversation: { type: 'string' },
        page: { type: 'string' },
        approve: { type: 'string', default: 'none' },
      },
      allowPositionals: true,
      strict: true,
    }));
  } catch (e) {
    return fail(io, {
      code: 'Validation',
      message: `${e instanceof Error ? e.message : 'Bad arguments'}. Usage: ask --db PATH --as EMAIL [--conversation ID] [--page PATH] [--approve all|none] "message"`,
    });
  }
  const message = positionals.join(' ').trim();
  if (!values.db || !values.as || !message)
    return fail(io, { code: 'Validation', message: 'Usage: ask --db PATH --as EMAIL [--conversation ID] [--page PATH] [--approve all|none] "message"' });
  if (values.approve !== 'all' && values.approve !== 'none') return fail(io, { code: 'Validation', message: '--approve must be "all" or "none".' });
  if (!existsSync(values.db))
    return fail(io, { code: 'NotFound', message: `Database ${values.db} was not found. Create it with: npm run cli -- seed --db ${values.db}` });

  const db = openDb(values.db);
  try {
    const user = findUserByEmail(db, values.as);
    if (!user) return fail(io, { code: 'NotFound', message: `No user with email ${values.as}. List them with: npm run cli -- users --db ${values.db}` });
    const kx = Kinetix.open({
      db,
      tools: overrides.tools ?? defaultToolRegistry(),
      log: (line) => io.err(JSON.stringify({ level: 'warn', msg: line })),
      ...overrides,
    });
    let started: { runId: string; conversationId: string };
    try {
      started = kx.startRun({ userId: user.id, message, ...(values.conversation ? { conversationId: values.conversation } : {}), page: values.page ?? null });
    } catch (e) {
      return fail(io, toErrorPayload(e));
    }
    for await (const env of kx.subscribe(user.id, started.runId)) {
      io.out(JSON.stringify({ id: env.id || null, ...env.event }));
      const ev = env.event;
      if (ev.type === EventType.CUSTOM && ev.name === KINETIX_EVENTS.confirmRequired) {
        const v = ev.value as { toolCallId: string; argsHash: string };
        kx.confirm(user.id, v.toolCallId, values.approve === 'all' ? { approve: true, argsHash: v.argsHash } : { approve: false });
      }
    }
    const outcome = await kx.waitForRun(started.runId);
    io.out(JSON.stringify({ answer: outcome.text, runId: outcome.runId, conversationId: outcome.conversationId, status: outcome.status }));
    if (outcome.status === 'completed') return 0;
    const err = outcome.error ?? { code: 'Internal' as const, message: `The run ended ${outcome.status}.` };
    // A run records its most specific code (ProviderError, ConfirmTimeout, Stopped, …); each is an ErrorCode.
    const code: ErrorCode = err.runCode && isErrorCode(err.runCode) ? err.runCode : err.code;
    io.err(JSON.stringify({ code, message: err.message, ...(err.runCode ? { runCode: err.runCode } : {}) }));
    return exitCodeFor(code);
  } finally {
    db.close();
  }
}
