/**
 * `npm run bench [-- NAME… ] [--no-write] [--quick]`: runs the registered benchmarks (all when no
 * name is given), prints their JSON on stdout and writes each one's section of BENCHMARKS.md.
 * Add a benchmark by adding an entry to BENCHES.
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { foundationMarkdown, runFoundationBench } from './foundation';
import { kinetixMarkdown, runKinetixBench } from '../kinetix/bench/harness-bench';
import { updateBenchmarksSection } from './report';

interface Bench {
  /** The BENCHMARKS.md section heading it owns. */
  heading: string;
  run(opts: { quick: boolean; log: (line: string) => void }): Promise<{ json: unknown; markdown: string }>;
}

const BENCHES: Record<string, Bench> = {
  foundation: {
    heading: 'Foundation',
    async run({ quick, log }) {
      const r = runFoundationBench(quick ? { athletes: 500, loads: 5000, iterations: 30, log } : { log });
      return { json: r, markdown: foundationMarkdown(r) };
    },
  },
  kinetix: {
    heading: 'Kinetix harness',
    async run({ quick, log }) {
      const r = await runKinetixBench({ quick, log });
      return { json: r, markdown: kinetixMarkdown(r) };
    },
  },
};

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: { 'no-write': { type: 'boolean', default: false }, quick: { type: 'boolean', default: false } },
    allowPositionals: true,
    strict: true,
  });
  const names = positionals.length > 0 ? positionals : Object.keys(BENCHES);
  const unknown = names.filter((n) => !BENCHES[n]);
  if (unknown.length > 0) {
    process.stderr.write(`Unknown benchmark(s): ${unknown.join(', ')}. Known: ${Object.keys(BENCHES).join(', ')}\n`);
    return 2;
  }
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  for (const name of names) {
    const bench = BENCHES[name]!;
    log(`${name}…`);
    const { json, markdown } = await bench.run({ quick: values.quick, log });
    process.stdout.write(`${JSON.stringify({ bench: name, ...(json as object) }, null, 2)}\n`);
    if (!values['no-write'] && !values.quick) {
      const file = resolve('BENCHMARKS.md');
      updateBenchmarksSection(file, bench.heading, markdown);
      log(`wrote the "${bench.heading}" section of ${file}`);
    }
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exitCode = 1;
  },
);
