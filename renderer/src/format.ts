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
 * A typed US-dollar amount → cents: "$1,234.50", "1234.5", "60", " $ 61.50 " → 123450, 123450,
 * 6000, 6150. Spaces are allowed only around the amount (and after the "$"): "45 50" is not a
 * price (NaN), never $4,550.00. A comma is read only as a thousands separator (groups of exactly
 * three digits after a first group of 1–3 digits that does not start with 0), so a comma-decimal
 * entry such as "61,50" or "0,095" is not a price (NaN); at most two decimals.
 * Returns undefined for an empty entry, NaN for anything else that is not a price.
 */
export function parseUsdCents(s: string): number | undefined {
  const t = s.trim().replace(/^\$\s*/, '');
  if (t === '') return s.trim() === '' ? undefined : Number.NaN;
  if (!/^([1-9]\d{0,2}(,\d{3})+|\d+)(\.\d{1,2})?$/.test(t)) return Number.NaN;
  const [whole = '', frac = ''] = t.replace(/,/g, '').split('.');
  return Number(whole) * 100 + Number(frac.padEnd(2, '0'));
}

/**
 * A number typed into a form field → the number; an empty entry → undefined; anything else (a
 * comma decimal "7,5", a space inside, "1e3", letters) → the text as typed, so the service refuses
 * it next to the field instead of a browser number field reading "7,5" as 75 (Chromium drops a
 * comma it takes for a thousands separator). Digits with at most one decimal point, an optional
 * leading minus (also U+2212 "−").
 */
export function numberInput(s: string): number | string | undefined {
  const t = s.trim();
  if (t === '') return undefined;
  return /^[-\u2212]?(\d+(\.\d*)?|\.\d+)$/.test(t) ? Number(t.replace('\u2212', '-')) : t;
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
