import { z } from 'zod';

/** Row id: UUID v7 (time-ordered), as a lowercase string. */
export const Id = z.string().uuid();
/** Calendar date `YYYY-MM-DD` (local clinic date, no time zone). */
export const IsoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date as YYYY-MM-DD')
  .refine(isRealDate, 'not a real calendar date');

/** True for a `YYYY-MM-DD` string naming a real day (rejects 2026-02-30, which Date.parse accepts). */
export function isRealDate(s: string): boolean {
  const t = Date.parse(`${s}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === s;
}
/** Instant, ISO-8601 UTC (`2026-11-29T10:00:00.000Z`). */
export const IsoDateTime = z.string().datetime();

/** Columns every business row carries (domain.md "Records"). */
export const RowMeta = {
  id: Id.describe('Record id (UUID v7).'),
  org_id: Id.describe('Organisation (club) the record belongs to.'),
  created_at: IsoDateTime.describe('When the record was created (ISO-8601 UTC).'),
  updated_at: IsoDateTime.describe('When the record was last changed (ISO-8601 UTC).'),
  /** Optimistic-concurrency counter; bumped on every write. */
  version: z.number().int().min(1).describe('Optimistic-concurrency counter; bumped on every write.'),
  /** Soft delete: set instead of removing the row. */
  deleted_at: IsoDateTime.nullable().describe('When the record was soft-deleted (ISO-8601 UTC); null while live.'),
};

export const META_COLUMNS = ['id', 'org_id', 'created_at', 'updated_at', 'version', 'deleted_at'] as const;
