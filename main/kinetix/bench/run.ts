/**
 * `npx tsx main/kinetix/bench/run.ts [--quick] [--no-write]`: runs the Kinetix harness benchmarks,
 * prints their JSON and writes the "Kinetix harness" section of BENCHMARKS.md (not with --quick).
 */
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { updateBenchmarksSection } from '../../bench/report';
import { kinetixMarkdown, runKinetixBench } from './harness-bench';

const { values } = parseArgs({ options: { quick: { type: 'boolean', default: false }, 'no-write': { type: 'boolean', default: false } }, strict: true });
const r = await runKinetixBench({ quick: values.quick, log: (l) => process.stderr.write(`[kinetix bench] ${l}\n`) });
process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
if (!values.quick && !values['no-write']) {
  updateBenchmarksSection(resolve('BENCHMARKS.md'), 'Kinetix harness', kinetixMarkdown(r));
  process.stderr.write('[kinetix bench] wrote the "Kinetix harness" section of BENCHMARKS.md\n');
}
