/**
 * The cumulative 20% price rule (models/policy.ts `numericBaselines`, issue 13) on every device
 * door, on a real SQLite file: steps of exactly 20% each (9000 → 10800 → 12960 cents) cannot add
 * up without an owner through the entry form, the CLI/`verb.call`, or an assistant proposal (nor
 * when it is approved); a single 10% change still applies; an owner-approved raise re-bases.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getRow } from '../data/rows';
import { approveProposal, proposeChangeset } from '../kinetix/proposals';
import { submitForm } from '../ipc/forms';
import { createClinicFixture, fixtureNow, type ClinicFixture } from '../testing/clinic-fixture';
import { VERBS, planWrite } from '.';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
});
afterEach(() => f.close());

const price = () => getRow<{ price_cents: number }>(f.db, 'rate_item', f.a.orgId, f.a.itemId)!.price_cents;
const now = fixtureNow();
const setPrice = (userId: string, cents: number) => f.call(userId, 'rates.updateItem', { id: f.a.itemId, price_cents: cents });

describe('cumulative price rule on the device', () => {
  it('CLI / verb.call: the second 20 % step needs an owner (44 % from the first price on record); nothing written', () => {
    expect(price()).toBe(9000);
    setPrice(f.a.users.admin, 10800); // exactly 20 %: allowed
    expect(price()).toBe(10800);
    expect(() => setPrice(f.a.users.admin, 12960)).toThrow(
      expect.objectContaining({
        code: 'Forbidden',
        message: expect.stringMatching(/\$108\.00 → \$129\.60 is a 44% rise from \$90\.00, the first value on record/),
        decisions: [
          expect.objectContaining({
            code: 'numeric_change_needs_owner',
            detail: expect.objectContaining({ baseline: 9000, baseline_source: 'first_on_record', before: 10800, after: 12960 }),
          }),
        ],
      }),
    );
    expect(price()).toBe(10800);
    // A step back down within 20 % of every baseline is fine.
    setPrice(f.a.users.admin, 9900);
    expect(price()).toBe(9900);
  });

  it('entry form: the second step waits for an owner instead of applying', () => {
    const r1 = submitForm(f.db, f.a.users.admin, { verb: 'rates.updateItem', input: { id: f.a.itemId, price_cents: 10800 } }, now);
    expect(r1.status).toBe('applied');
    const r2 = submitForm(f.db, f.a.users.admin, { verb: 'rates.updateItem', input: { id: f.a.itemId, price_cents: 12960 } }, now);
    expect(r2.status === 'review' && r2.proposal.status).toBe('needs_owner');
    expect(price()).toBe(10800);
  });

  it('entry form, bulk change by percentage: +20 % then +20 % needs an owner', () => {
    submitForm(f.db, f.a.users.admin, { verb: 'rates.bulkUpdate', input: { folder_id: f.a.folderId, pct: 20 } }, now);
    expect(price()).toBe(10800);
    const r = submitForm(f.db, f.a.users.admin, { verb: 'rates.bulkUpdate', input: { folder_id: f.a.folderId, pct: 20 } }, now);
    expect(r.status === 'review' && r.proposal.status).toBe('needs_owner');
    expect(price()).toBe(10800);
  });

  it("assistant: the second step's proposal needs an owner, and its proposer cannot approve it", () => {
    const verb = VERBS.get('rates.updateItem');
    if (verb?.kind !== 'write') throw new Error('expected a write verb');
    const plan = (cents: number) => planWrite(f.as(f.a.users.admin), verb, { id: f.a.itemId, price_cents: cents }).planned;
    const p1 = proposeChangeset(f.db, { userId: f.a.users.admin, planned: plan(10800), source: 'assistant', toolName: 'rates.updateItem', title: 't', now });
    expect(p1.status).toBe('proposed');
    approveProposal(f.db, { approverUserId: f.a.users.admin, changesetId: p1.id, contentHash: p1.contentHash, now });
    // Planned from 10800: the proposal itself already needs an owner.
    const p2 = proposeChangeset(f.db, { userId: f.a.users.admin, planned: plan(12960), source: 'assistant', toolName: 'rates.updateItem', title: 't', now });
    expect(p2.status).toBe('needs_owner');
    expect(() => approveProposal(f.db, { approverUserId: f.a.users.admin, changesetId: p2.id, contentHash: p2.contentHash, now })).toThrow();
    expect(price()).toBe(10800);
  });

  it('a single 10 % change applies at once', () => {
    setPrice(f.a.users.admin, 9900);
    expect(price()).toBe(9900);
  });

  it('an owner-approved raise re-bases the price: later steps count from it', () => {
    const r = submitForm(f.db, f.a.users.admin, { verb: 'rates.updateItem', input: { id: f.a.itemId, price_cents: 13500 } }, now); // +50 %
    if (r.status !== 'review') throw new Error('expected review');
    approveProposal(f.db, { approverUserId: f.a.users.owner, changesetId: r.proposal.id, contentHash: r.proposal.contentHash, now });
    expect(price()).toBe(13500);
    setPrice(f.a.users.admin, 14850); // +10 % from the owner's price (65 % above 9000, which no longer counts)
    expect(price()).toBe(14850);
    setPrice(f.a.users.admin, 16200); // 20 % from 13500
    expect(() => setPrice(f.a.users.admin, 17820)).toThrow(expect.objectContaining({ code: 'Forbidden' })); // 32 % from 13500
  });
});
