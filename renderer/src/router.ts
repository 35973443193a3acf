/**
 * Hash routes (`#/athletes/<id>/injuries`): they work the same from file:// in Electron and from
 * the web host, and a reload keeps the page.
 */
import { useSyncExternalStore } from 'react';

/** Tabs of the athlete page. */
export const ATHLETE_TABS = ['overview', 'injuries', 'screenings', 'wellness', 'workload', 'pose'] as const;
export type AthleteTab = (typeof ATHLETE_TABS)[number];

/** Sections of the Capture page: sessions (results list), record, process, rig (set-up and calibration), one session's results. */
export const CAPTURE_TABS = ['sessions', 'record', 'process', 'rig', 'results'] as const;
export type CaptureTab = (typeof CAPTURE_TABS)[number];

export type Route =
  | { page: 'athletes' }
  | { page: 'athlete'; id: string; tab: AthleteTab }
  | { page: 'squads' }
  | { page: 'fees' }
  | { page: 'activity' }
  | { page: 'approvals' }
  | { page: 'trace'; runId: string }
  | { page: 'settings' }
  | { page: 'capture'; tab: CaptureTab; id?: string }
  | { page: 'sync' }
  | { page: 'help'; slug?: string; anchor?: string }
  | { page: 'notfound'; path: string };

/** Parse a location hash. */
export function parseHash(hash: string): Route {
  const path = hash.replace(/^#/, '') || '/athletes';
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  const [a, b, c] = parts;
  switch (a) {
    case undefined:
    case 'athletes':
      if (!b) return { page: 'athletes' };
      // An unknown tab is kept as given; the page then says it is not available.
      return { page: 'athlete', id: b, tab: (c ?? 'overview') as AthleteTab };
    case 'squads':
      return { page: 'squads' };
    case 'fees':
      return { page: 'fees' };
    case 'activity':
      return { page: 'activity' };
    case 'approvals':
      return { page: 'approvals' };
    case 'runs':
      return b ? { page: 'trace', runId: b } : { page: 'activity' };
    case 'settings':
      return { page: 'settings' };
    case 'capture':
      // An unknown section is kept as given; the page then says it is not available.
      if (b === 'results' && c) return { page: 'capture', tab: 'results', id: c };
      return { page: 'capture', tab: (b ?? 'sessions') as CaptureTab };
    case 'sync':
      return { page: 'sync' };
    case 'help':
      // `/help/<slug>#<anchor>` links (help pages, citations) arrive as `/help/<slug>/<anchor>` or with `#`.
      if (!b) return { page: 'help' };
      {
        const [slug, hashAnchor] = b.split('#');
        const anchor = c ?? hashAnchor;
        return anchor ? { page: 'help', slug: slug ?? b, anchor } : { page: 'help', slug: slug ?? b };
      }
    default:
      return { page: 'notfound', path };
  }
}

/** The hash for a route. */
export function href(r: Route): string {
  switch (r.page) {
    case 'athletes':
      return '#/athletes';
    case 'athlete':
      return `#/athletes/${encodeURIComponent(r.id)}${r.tab === 'overview' ? '' : `/${r.tab}`}`;
    case 'squads':
      return '#/squads';
    case 'fees':
      return '#/fees';
    case 'activity':
      return '#/activity';
    case 'approvals':
      return '#/approvals';
    case 'trace':
      return `#/runs/${encodeURIComponent(r.runId)}`;
    case 'settings':
      return '#/settings';
    case 'capture':
      if (r.tab === 'results' && r.id) return `#/capture/results/${encodeURIComponent(r.id)}`;
      return r.tab === 'sessions' ? '#/capture' : `#/capture/${r.tab}`;
    case 'sync':
      return '#/sync';
    case 'help':
      return r.slug ? `#/help/${encodeURIComponent(r.slug)}${r.anchor ? `/${encodeURIComponent(r.anchor)}` : ''}` : '#/help';
    case 'notfound':
      return `#/${r.path}`;
  }
}

/**
 * The hash for an in-app path as the help pages and the assistant write it (`/athletes/<id>`,
 * `/help/<slug>#<anchor>`); `:id` is filled with `athleteId` when given, else the athletes list.
 */
export function hashForAppPath(path: string, athleteId?: string | null): string {
  if (!path.startsWith('/') || path.startsWith('//')) return '#/help';
  let p = path;
  if (p.includes(':id')) p = athleteId ? p.replace(':id', encodeURIComponent(athleteId)) : '/athletes';
  const [base, anchor] = p.split('#');
  return `#${base}${anchor ? `/${anchor}` : ''}`;
}

/** Go to a route. */
export function navigate(r: Route): void {
  window.location.hash = href(r);
}

function subscribe(cb: () => void): () => void {
  window.addEventListener('hashchange', cb);
  return () => window.removeEventListener('hashchange', cb);
}

/** The current route, re-rendering on hash changes. */
export function useRoute(): Route {
  const hash = useSyncExternalStore(subscribe, () => window.location.hash);
  return parseHash(hash);
}
