/**
 * A form's stale check on a device enrolled for sync (issue 12 review B3), with real parts: the
 * HQ server over a real Postgres (main/sync/testing/hq-stack.ts), device SQLite files and the sync
 * engine. A local edit is applied optimistically (version v → v+1); HQ refuses it because another
 * device wrote the row first (HQ's row also at v+1), and the device restores HQ's row — the same
 * version number, other content. A form opened on the optimistic row must not pass its check on
 * HQ's row: it quotes the `updated_at` it showed as well as the version.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { RateItem } from '../../models/records';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import type { Db } from '../data/db';
import { findUserByEmail } from '../data/identity';
import { callVerb } from '../services';
import { DeviceSync } from '../sync/engine';
import { useDeviceFiles } from '../sync/testing/device-files';
import { havePg, useHqStack } from '../sync/testing/hq-stack';
import { submitForm } from './forms';

const FAST = { backoff: { initialMs: 50, maxMs: 500 }, streamBackoff: { initialMs: 100, maxMs: 500 }, pollMs: 50 };

describe.skipIf(!havePg)('form stale check on a synced device', () => {
  const hq = useHqStack();
  const engines: DeviceSync[] = [];
  const files = useDeviceFiles('ai-form-sync-');
  afterAll(async () => {
    for (const e of engines) await e.stop();
  });

  async function enrol(email: string, name: string): Promise<{ db: Db; sync: DeviceSync; userId: string }> {
    const db = files.open();
    const sync = await DeviceSync.enrol(db, { hqUrl: hq.url, email, pin: DEMO_PIN, code: await hq.code(email), deviceName: name }, FAST);
    engines.push(sync);
    await sync.syncOnce();
    return { db, sync, userId: findUserByEmail(db, email)!.id };
  }
  /** The fee as the Fees page shows it (rates.listItems, the verb its edit form reads). */
  function shownItem(device: { db: Db; userId: string }, id: string): RateItem {
    const { items } = callVerb({ db: device.db, userId: device.userId }, 'rates.listItems', { limit: 500 });
    return items.find((i) => i.id === id)!;
  }
  async function hqItem(id: string): Promise<{ price_cents: number; name: string; version: number }> {
    const [r] = await hq.query<{ price_cents: number; name: string; version: number }>(
      hq.summary.orgId,
      'SELECT price_cents, name, version FROM rate_item WHERE id = $1',
      [id],
    );
    return r!;
  }

  it('refuses a form opened on a pending edit that HQ then refused, although HQ’s row has the same version; HQ keeps the other device’s write', async () => {
    const laptop = await enrol(DEMO_EMAILS.admin, 'Clinic laptop');
    const desk = await enrol(DEMO_EMAILS.admin, 'Front desk');
    const { items } = callVerb({ db: laptop.db, userId: laptop.userId }, 'rates.listItems', { limit: 500 });
    const it0 = items[5]!;
    // The laptop renames the fee (pending at HQ); the user opens the fee's form on that row.
    callVerb({ db: laptop.db, userId: laptop.userId }, 'rates.updateItem', { id: it0.id, name: 'Laptop name' });
    const shown = shownItem(laptop, it0.id);
    expect(shown).toMatchObject({ name: 'Laptop name', version: it0.version + 1 });
    // Meanwhile the front desk lowers the price at HQ first; the laptop's rename is refused and the
    // laptop shows HQ's row, at the very version the form showed.
    const lowered = Math.round(it0.price_cents * 0.95);
    callVerb({ db: desk.db, userId: desk.userId }, 'rates.updateItem', { id: it0.id, price_cents: lowered });
    await desk.sync.syncOnce();
    await laptop.sync.syncOnce();
    expect(laptop.sync.conflicts().length).toBeGreaterThan(0);
    const now = shownItem(laptop, it0.id);
    expect(now).toMatchObject({ name: it0.name, price_cents: lowered, version: shown.version });
    expect(now.updated_at).not.toBe(shown.updated_at);

    // The user saves the form (Fees.tsx sends the fields changed from what it opened with): refused.
    const save = () =>
      submitForm(laptop.db, laptop.userId, {
        verb: 'rates.updateItem',
        input: { id: it0.id, price_cents: shown.price_cents + 100 },
        expected_versions: { [it0.id]: { version: shown.version, updated_at: shown.updated_at } },
      });
    let refused: unknown;
    try {
      save();
    } catch (e) {
      refused = e;
    }
    expect(refused).toMatchObject({
      code: 'Conflict',
      message: expect.stringMatching(/^Someone changed this record after you opened the form\. Nothing was written\./),
      conflicts: [{ table: 'rate_item', id: it0.id, expectedVersion: shown.version, actualVersion: now.version }],
    });
    await laptop.sync.syncOnce();
    expect(await hqItem(it0.id)).toMatchObject({ price_cents: lowered, name: it0.name, version: it0.version + 1 });

    // Reopened on the current row, the same change saves and reaches HQ.
    const r = submitForm(laptop.db, laptop.userId, {
      verb: 'rates.updateItem',
      input: { id: it0.id, price_cents: now.price_cents + 100 },
      expected_versions: { [it0.id]: { version: now.version, updated_at: now.updated_at } },
    });
    expect(r.status).toBe('applied');
    // The form reopened at once, on that pending change, keeps its stamp while HQ's copy of the
    // change (HQ's updated_at, the same content) replaces it: saving later is no false conflict.
    const pendingShown = shownItem(laptop, it0.id);
    await laptop.sync.syncOnce();
    expect(await hqItem(it0.id)).toMatchObject({ price_cents: lowered + 100, version: it0.version + 2 });
    const settled = shownItem(laptop, it0.id);
    expect(settled.version).toBe(pendingShown.version);
    expect(settled.updated_at).not.toBe(pendingShown.updated_at);
    const again = submitForm(laptop.db, laptop.userId, {
      verb: 'rates.updateItem',
      input: { id: it0.id, price_cents: pendingShown.price_cents + 100 },
      expected_versions: { [it0.id]: { version: pendingShown.version, updated_at: pendingShown.updated_at } },
    });
    expect(again.status).toBe('applied');
    await laptop.sync.syncOnce();
    expect(await hqItem(it0.id)).toMatchObject({ price_cents: lowered + 200, version: it0.version + 3 });
  }, 180_000);
});
