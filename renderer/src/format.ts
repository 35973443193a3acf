/** Display helpers (dates, money, labels). Pure functions. */
import type { Role } from '../../models/roles';

const ROLE_LABELS: Record<Role, string> = {
  owner: 'Owner',
  admin: 'Administrator',
  doctor: 'Doctor',
  physio: 'Physiotherapist',
  sports_scientist: 'Sports scientist',
  strength_coach: 'Strength & conditioning coach',
  coach: 'Coach',
  analyst: 'Analyst',
  athlete: 'Athlete',
  super_admin: 'System administrator',
};

/** Human label of a role. */
export function roleLabel(role: Role | string): string {
  return ROLE_LABELS[role as Role] ?? role;
}

/** `snake_case` → "Snake case". */
export function humanize(s: string): string {
  const t = s.replace(/_/g, ' ');
  return t.charAt(0).toUpperCase() + t.slice(1);
}

/** YYYY-MM-DD → "12 Nov 2026". */
export function formatDate(d: string | null | undefined): string {
  if (!d) return '—';
  const t = Date.parse(d.length === 10 ? `${d}T00:00:00Z` : d);
  if (Number.isNaN(t)) return d;
  return new Date(t).toLocaleDateString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', timeZone: 'UTC' });
}

/** ISO instant → "12 Nov 2026, 14:03" (UTC). */
export function formatDateTime(d: string | null | undefined): string {
  if (!d) return '—';
  const t = Date.parse(d);
  if (Number.isNaN(t)) return d;
  return new Date(t).toLocaleString('en-GB', { day: 'numeric', month: 'short', year: 'numeric', hour: '2-digit', minute: '2-digit', timeZone: 'UTC' }) + ' UTC';
}

/** USD cents → "$1,234.50". */
export function formatCents(c: number): string {
  return (c / 100).toLocaleString('en-US', { style: 'currency', currency: 'USD' });
}

/**
 * A typed US-dollar amount → cents: "$1,234.50", "1234.5", "60" → 123450, 123450, 6000.
 * A comma is read only as a thousands separator (groups of exactly three digits), so a
 * comma-decimal entry such as "61,50" is not a price (NaN), never $6,150.00; at most two decimals.
 * Returns undefined for an empty entry, NaN for anything else that is not a price.
 */
export function parseUsdCents(s: string): number | undefined {
  const t = s.replace(/[$\s]/g, '');
  if (t === '') return undefined;
  if (!/^(\d{1,3}(,\d{3})+|\d+)(\.\d{1,2})?$/.test(t)) return Number.NaN;
  const [whole = '', frac = ''] = t.replace(/,/g, '').split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
}

/** Age in whole years on `today`. */
export function ageOn(dob: string, today: string): number {
  const [y, m, d] = dob.split('-').map(Number) as [number, number, number];
  const [ty, tm, td] = today.split('-').map(Number) as [number, number, number];
  return ty - y - (tm < m || (tm === m && td < d) ? 1 : 0);
}

/** Today as YYYY-MM-DD (UTC). */
export function todayIso(): string {
  return new Date().toISOString().slice(0, 10);
}

/** YYYY-MM-DD plus n days. */
export function addDays(date: string, n: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
}
