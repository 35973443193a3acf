/** Writing one benchmark's section of BENCHMARKS.md without touching the others'. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Replace the `## <heading>` section of `file` (up to the next `## ` heading) with `markdown`,
 * or append it when absent. Creates the file with a title when missing.
 * @param markdown the whole section, starting with its `## <heading>` line
 */
export function updateBenchmarksSection(file: string, heading: string, markdown: string): void {
  const body = markdown.endsWith('\n') ? markdown : `${markdown}\n`;
  const text = existsSync(file)
    ? readFileSync(file, 'utf8')
    : '# Benchmarks\n\nMeasured figures; each section is written by its own script (see the run line in each).\n';
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.trim() === `## ${heading}`);
  if (start < 0) {
    writeFileSync(file, `${text.replace(/\n*$/, '\n\n')}${body}`);
    return;
  }
  let end = lines.findIndex((l, i) => i > start && l.startsWith('## '));
  if (end < 0) end = lines.length;
  const before = lines.slice(0, start).join('\n');
  const after = lines.slice(end).join('\n');
  writeFileSync(file, `${before.replace(/\n*$/, '\n\n')}${body}${after ? `\n${after}` : ''}`.replace(/\n{3,}/g, '\n\n'));
}
