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

/** Median of `xs` (mean of the two middle values for an even count); NaN for an empty list. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/**
 * The p-th percentile (0 < p ≤ 100) of `xs` by the nearest-rank method: the value of rank
 * ⌈p/100 × n⌉ in ascending order (e.g. p = 95 over 100 values is the 95th smallest); NaN for an
 * empty list. Source: the nearest-rank definition (NIST/SEMATECH e-Handbook; Wikipedia "Percentile").
 */
export function percentile(xs: readonly number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}
