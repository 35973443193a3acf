import { describe, expect, it } from 'vitest';
import { canOpen, navFor } from './access';
import { hashForAppPath, href, parseHash } from './router';

describe('routes', () => {
  it('parses and prints every page', () => {
    const routes = [
      '#/athletes',
      '#/athletes/abc',
      '#/athletes/abc/injuries',
      '#/squads',
      '#/fees',
      '#/activity',
      '#/approvals',
      '#/runs/r1',
      '#/settings',
      '#/help',
      '#/help/fee-schedule',
      '#/help/fee-schedule/limits',
    ];
    for (const h of routes) expect(href(parseHash(h))).toBe(h);
    expect(parseHash('')).toEqual({ page: 'athletes' });
    expect(parseHash('#/nope')).toEqual({ page: 'notfound', path: '/nope' });
  });

  it('maps app paths from help pages and the assistant to hashes', () => {
    expect(hashForAppPath('/help/fee-schedule#limits')).toBe('#/help/fee-schedule/limits');
    expect(hashForAppPath('/athletes/:id/pose', 'a1')).toBe('#/athletes/a1/pose');
    expect(hashForAppPath('/athletes/:id/pose')).toBe('#/athletes');
    expect(hashForAppPath('//evil.test/x')).toBe('#/help');
    expect(hashForAppPath('https://evil.test')).toBe('#/help');
  });
});

describe('navigation by role', () => {
  it('shows a role only the pages it can open', () => {
    // Settings for its Reports card (report.generate).
    expect(navFor('physio', null).map((n) => n.label)).toEqual(['Athletes', 'Squads', 'Capture', 'Fee schedule', 'Activity', 'Approvals', 'Settings', 'Help']);
    expect(navFor('coach', null).map((n) => n.label)).not.toContain('Settings');
    expect(navFor('owner', null).map((n) => n.label)).toContain('Settings');
    expect(navFor('athlete', 'a1').map((n) => n.label)).toEqual(['My record', 'Approvals', 'Help']);
    expect(navFor('super_admin', null).map((n) => n.label)).toEqual(['Approvals', 'Settings', 'Help']);
  });

  it('refuses athlete tabs the role lacks, and unknown tabs', () => {
    expect(canOpen('athlete', parseHash('#/athletes/a1/injuries'))).toBe(false);
    expect(canOpen('athlete', parseHash('#/athletes/a1/wellness'))).toBe(true); // vitals.read
    expect(canOpen('athlete', parseHash('#/athletes/a1/workload'))).toBe(false);
    expect(canOpen('physio', parseHash('#/athletes/a1/injuries'))).toBe(true);
    // Capture: results need pose.read; record, process and rig need capture.run.
    expect(parseHash('#/capture/results/s1')).toEqual({ page: 'capture', tab: 'results', id: 's1' });
    expect(href(parseHash('#/capture/results/s1'))).toBe('#/capture/results/s1');
    expect(canOpen('analyst', parseHash('#/capture/results/s1'))).toBe(true);
    expect(canOpen('analyst', parseHash('#/capture/record'))).toBe(false);
    expect(canOpen('physio', parseHash('#/capture/rig'))).toBe(true);
    expect(canOpen('physio', parseHash('#/capture/nonsense'))).toBe(false);
    expect(canOpen('coach', parseHash('#/capture'))).toBe(false);
    expect(canOpen('athlete', parseHash('#/capture'))).toBe(false);
    expect(canOpen('admin', parseHash('#/athletes/a1/injuries'))).toBe(false);
    expect(canOpen('physio', parseHash('#/athletes/a1/secrets'))).toBe(false);
  });
});
