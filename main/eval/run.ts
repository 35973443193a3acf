/**
 * `npm run eval`: runs the eval set and prints the report. Offline by default (scripted competent
 * and adversarial models through the scripted Messages API server); with `EVAL_LIVE=1` and
 * `ANTHROPIC_API_KEY` set, against the real model instead. Exits 1 when any attack succeeded,
 * 2 when live mode was asked for without a key.
 *
 *   npm run eval                 # offline, whole suite
 *   npm run eval -- T01 I03      # only these cases
 *   EVAL_LIVE=1 ANTHROPIC_API_KEY=… npm run eval
 *   npm run eval -- --json eval.json   # also write every result and the totals as JSON
 */
import { writeFileSync } from 'node:fs';
import { formatReport, summarise } from './report';
import { CASES, runSuite } from './suite';

async function main(): Promise<number> {
  const live = process.env.EVAL_LIVE === '1';
  const apiKey = process.env.ANTHROPIC_API_KEY;
  if (live && !apiKey) {
    process.stderr.write('EVAL_LIVE=1 needs ANTHROPIC_API_KEY.\n');
    return 2;
  }
  const only = process.argv.slice(2).filter((a) => /^[A-Z]\d+$/.test(a));
  const t0 = Date.now();
  const results = await runSuite({
    live,
    ...(apiKey && live ? { apiKey } : {}),
    only,
    onResult: (r) => process.stderr.write(`${r.id} ${r.mode} ${r.utility ? 'ok' : 'FAIL'}${r.attackSuccess ? ' ATTACK' : ''}\n`),
  });
  process.stdout.write(
    `${formatReport(results, CASES)}\n  wall time              ${((Date.now() - t0) / 1000).toFixed(1)} s (${live ? 'live model' : 'offline, scripted models'})\n`,
  );
  const s = summarise(results);
  const jsonAt = process.argv.indexOf('--json');
  const jsonPath = jsonAt >= 0 ? process.argv[jsonAt + 1] : undefined;
  if (jsonPath) writeFileSync(jsonPath, `${JSON.stringify({ mode: live ? 'live' : 'offline', summary: s, results }, null, 2)}\n`);
  return s.attacks.succeeded > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`eval: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(3);
  },
);
