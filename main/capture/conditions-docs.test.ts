/**
 * Every condition a reading can carry (`CONDITION_CODES`, models/capture/quality.ts) is explained
 * where a clinician and a developer look: once in the help page's condition list (with what to
 * do), and in main/capture/README.md.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONDITION_CODES, INFO_CONDITIONS } from '../../models/capture/quality';
import { REPO_ROOT } from './testing/paths';

const help = readFileSync(path.join(REPO_ROOT, 'main/help/pages/pose-metrics.md'), 'utf8');
const readme = readFileSync(path.join(REPO_ROOT, 'main/capture/README.md'), 'utf8');
const section = (md: string, anchor: string) => {
  const start = md.indexOf(`{#${anchor}}`);
  const end = md.indexOf('\n## ', start);
  return md.slice(start, end < 0 ? undefined : end);
};

describe('condition codes are documented', () => {
  it("the help page's condition list names each code in exactly one entry, informational ones after the failing ones", () => {
    const list = section(help, 'condition-list');
    const infoAt = list.indexOf('do not by themselves fail it');
    expect(infoAt).toBeGreaterThan(0);
    for (const code of CONDITION_CODES) {
      const at = [...list.matchAll(new RegExp(`\\(\`${code}\`\\)`, 'g'))].map((m) => m.index);
      expect(at, code).toHaveLength(1);
      expect(at[0]! > infoAt, code).toBe(INFO_CONDITIONS.includes(code));
    }
  });

  it('main/capture/README.md names each code', () => {
    for (const code of CONDITION_CODES) expect(readme, code).toContain(`\`${code}\``);
  });
});
