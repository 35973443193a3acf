import { describe, expect, it } from 'vitest';
import { ChangesetUpload, timestamptzToIso } from './sync';

describe('HQ wire format', () => {
  it("turns Postgres timestamptz text into the device's ISO-8601 UTC", () => {
    expect(timestamptzToIso('2026-08-23 08:00:00+00')).toBe('2026-08-23T08:00:00.000Z');
    expect(timestamptzToIso('2026-08-23 08:00:00.123456+00')).toBe('2026-08-23T08:00:00.123Z');
    // The UTC fast path agrees with the general parser for every precision Postgres sends.
    for (const v of ['2026-08-23 08:00:00+00', '1999-12-31 23:59:59.9+00', '2026-02-28 00:00:00.05+00', '2026-08-23 08:00:00.999999+00']) {
      expect(timestamptzToIso(v)).toBe(new Date(Date.parse(v.replace(' ', 'T').replace('+00', 'Z'))).toISOString());
    }
    expect(timestamptzToIso('2026-08-23 10:30:00.5+02:30')).toBe('2026-08-23T08:00:00.500Z');
    expect(timestamptzToIso('2026-08-23T08:00:00.000Z')).toBe('2026-08-23T08:00:00.000Z');
    expect(timestamptzToIso('not a time')).toBe('not a time');
  });

  it('accepts an outbox entry as the device stores it and refuses unknown keys', () => {
    const entry = {
      changeset_id: '01a02da2-3402-7350-a37a-df166859869d',
      verb: 'wellness.record',
      changes: [{ op: 'insert', table: 'wellness', id: '01a02da2-3403-73f5-8114-5880d542ae08', after: { sleep: 3 } }],
    };
    expect(ChangesetUpload.safeParse({ changesets: [entry] }).success).toBe(true);
    expect(ChangesetUpload.safeParse({ changesets: [{ ...entry, sneaky: 1 }] }).success).toBe(false);
    expect(ChangesetUpload.safeParse({ changesets: [{ ...entry, changes: [{ ...entry.changes[0], org_id: 'x' }] }] }).success).toBe(false);
  });
});
