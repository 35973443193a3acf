/** Landing pages per role (access.ts homeFor): every role lands on a page it can open. */
import { describe, expect, it } from 'vitest';
import { ROLES } from '../../models/roles';
import { canOpen, homeFor } from './access';

describe('homeFor', () => {
  it('lands every role on a page it can open', () => {
    for (const role of ROLES) expect(canOpen(role, homeFor(role, role === 'athlete' ? 'a1' : null)), role).toBe(true);
  });
  it('a super admin lands on Settings, an athlete on their own record, clinicians on Athletes', () => {
    expect(homeFor('super_admin', null)).toEqual({ page: 'settings' });
    expect(homeFor('athlete', 'a1')).toEqual({ page: 'athlete', id: 'a1', tab: 'overview' });
    expect(homeFor('physio', null)).toEqual({ page: 'athletes' });
    expect(homeFor('admin', null)).toEqual({ page: 'athletes' });
  });
});

describe('Settings', () => {
  it('opens for the roles that manage settings or generate reports, and for no other', () => {
    const open = ['owner', 'admin', 'doctor', 'physio', 'sports_scientist', 'analyst', 'super_admin'];
    for (const role of ROLES) expect(canOpen(role, { page: 'settings' }), role).toBe(open.includes(role));
  });
});
