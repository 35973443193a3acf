import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SCRIPT = resolve('scripts/setup-system.sh');
const isRoot = process.getuid?.() === 0;
const hasSudo = spawnSync('sh', ['-c', 'command -v sudo'], { encoding: 'utf8' }).status === 0;
const canRunAsUser = isRoot && (existsSync('/usr/sbin/runuser') || existsSync('/sbin/runuser'));

function run(args: string[], asUser?: string) {
  const cmd = asUser ? ['runuser', '-u', asUser, '--', 'bash', SCRIPT, ...args] : ['bash', SCRIPT, ...args];
  return spawnSync(cmd[0]!, cmd.slice(1), { encoding: 'utf8', cwd: '/tmp' });
}

describe('scripts/setup-system.sh (README set-up, .ci/run)', () => {
  it('plans apt-get with sudo only when not root', () => {
    const r = run(['--dry-run', '--all']);
    expect(r.status).toBe(0);
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('+ '));
    expect(lines).toEqual([
      `+ ${isRoot ? '' : 'sudo '}apt-get update -qq`,
      `+ ${isRoot ? '' : 'sudo '}env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium postgresql-15 libopencv-dev libavformat-dev g++ make python3`,
    ]);
  });

  it.skipIf(!canRunAsUser)('as a user it plans sudo, and without sudo it stops with what to do instead', () => {
    const plan = run(['--dry-run', '--all'], 'nobody');
    expect(plan.status, plan.stderr).toBe(0);
    expect(plan.stdout).toContain('+ sudo apt-get update -qq');
    if (!hasSudo) {
      const real = run(['--all'], 'nobody');
      expect(real.status).toBe(1);
      expect(real.stderr).toContain('not a root shell and sudo is not installed');
      expect(real.stderr).toContain('run this script as root');
    }
  });

  it('refuses an unknown argument with exit 2', () => {
    const r = run(['--frobnicate']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown argument '--frobnicate'");
  });
});
