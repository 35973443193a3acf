/**
 * What the signed-in role can open. Pages the role cannot use are left out of navigation and
 * show "not available" by URL; the service layer refuses the data anyway.
 */
import type { Permission, Role } from '../../models/roles';
import { hasPermission } from '../../models/roles';
import type { AthleteTab, Route } from './router';

/** A navigation entry. */
export interface NavItem {
  label: string;
  route: Route;
  page: Route['page'];
}

/** Permissions of which an athlete tab needs any one (empty = none needed). */
export const TAB_PERMISSION: Readonly<Record<AthleteTab, readonly Permission[]>> = {
  overview: [],
  injuries: ['injury.read'],
  screenings: ['screening.read'],
  wellness: ['wellness.read', 'vitals.read'],
  workload: ['workload.read'],
  pose: ['pose.read'],
};

/** True when `role` may open athlete tab `tab` (unknown tabs: false). */
export function canOpenTab(role: Role, tab: string): boolean {
  const need = (TAB_PERMISSION as Record<string, readonly Permission[] | undefined>)[tab];
  return need !== undefined && (need.length === 0 || need.some((p) => hasPermission(role, p)));
}

/** Capture sections that record, process or change the rig (need `capture.run`). */
export const CAPTURE_RUN_TABS = ['record', 'process', 'rig'] as const;

/** True when `role` may open `route`. */
export function canOpen(role: Role, route: Route): boolean {
  switch (route.page) {
    case 'athletes':
    case 'athlete':
      if (!hasPermission(role, 'athlete.read')) return false;
      if (route.page === 'athlete') return canOpenTab(role, route.tab);
      return true;
    case 'squads':
      return hasPermission(role, 'athlete.read') && role !== 'athlete';
    case 'fees':
      return hasPermission(role, 'rates.read');
    case 'activity':
      return hasPermission(role, 'activity.read');
    case 'trace':
      return hasPermission(role, 'athlete.read') && role !== 'athlete';
    case 'approvals':
      return hasPermission(role, 'kinetix.use');
    case 'settings':
      // Settings holds the org's configuration (settings.manage) and the Reports card (report.generate).
      return hasPermission(role, 'settings.manage') || hasPermission(role, 'report.generate');
    case 'capture':
      // Results need pose.read; recording, processing and the rig need capture.run.
      if (route.tab === 'sessions' || route.tab === 'results') return hasPermission(role, 'pose.read');
      return (CAPTURE_RUN_TABS as readonly string[]).includes(route.tab) && hasPermission(role, 'capture.run');
    case 'help':
    case 'sync':
    case 'notfound':
      return true;
  }
}

/** Navigation for a role (only what it can open). Athletes see their own record as "My record". */
export function navFor(role: Role, linkedAthleteId: string | null): NavItem[] {
  const items: NavItem[] = [];
  if (role === 'athlete') {
    if (linkedAthleteId) items.push({ label: 'My record', route: { page: 'athlete', id: linkedAthleteId, tab: 'overview' }, page: 'athlete' });
  } else {
    items.push({ label: 'Athletes', route: { page: 'athletes' }, page: 'athletes' });
  }
  const rest: NavItem[] = [
    { label: 'Squads', route: { page: 'squads' }, page: 'squads' },
    { label: 'Capture', route: { page: 'capture', tab: 'sessions' }, page: 'capture' },
    { label: 'Fee schedule', route: { page: 'fees' }, page: 'fees' },
    { label: 'Activity', route: { page: 'activity' }, page: 'activity' },
    { label: 'Approvals', route: { page: 'approvals' }, page: 'approvals' },
    { label: 'Settings', route: { page: 'settings' }, page: 'settings' },
    { label: 'Help', route: { page: 'help' }, page: 'help' },
  ];
  return [...items, ...rest.filter((i) => canOpen(role, i.route))].filter((i) => canOpen(role, i.route));
}

/**
 * Where `role` lands after signing in (the default route, `#/athletes`, when the role cannot open
 * it): an athlete account on their own record; a role that cannot read athletes but runs the
 * installation (super admin) on Settings, where it manages users; otherwise the first page of
 * its navigation. Roles that read athletes stay on Athletes.
 */
export function homeFor(role: Role, linkedAthleteId: string | null): Route {
  // (An unlinked athlete account stays on Athletes, which tells them their account is not linked.)
  if (role === 'athlete' && linkedAthleteId) return { page: 'athlete', id: linkedAthleteId, tab: 'overview' };
  if (canOpen(role, { page: 'athletes' })) return { page: 'athletes' };
  if (canOpen(role, { page: 'settings' })) return { page: 'settings' };
  return navFor(role, linkedAthleteId)[0]?.route ?? { page: 'help' };
}
