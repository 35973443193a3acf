/**
 * Owner rules the issue 13 review found open, on a real SQLite file through the device doors
 * (entry form, `verb.call`/CLI, settings):
 * - a fee code freed by a rename (or a delete) carries its last price: a new item under it, or
 *   another item renamed to it, more than 20 % away needs an owner (case-insensitive);
 * - removing a budget cap is a rise beyond any bound (needs an owner); the organisation's cap
 *   falls under the same rule; a cut or a cap set where none was needs no owner;
 * - the same form sent again while its proposal waits returns that proposal (no duplicates);
 * - an owner's own over-20 % change is shown as a diff first, applied on Confirm.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getRow } from '../data/rows';
import { approveProposal, listProposals } from '../kinetix/proposals';
import { updateAssistantSettings } from '../kinetix/settings';
import { ToolRegistry } from '../kinetix/registry';
import { submitForm } from '../ipc/forms';
import { createClinicFixture, fixtureNow, type ClinicFixture } from '../testing/clinic-fixture';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
});
afterEach(() => f.close());

const now = fixtureNow();
type Item = { id: string; code: string; price_cents: number; version: number };
const item = (id: string) => getRow<Item>(f.db, 'rate_item', f.a.orgId, id)!;
const items = () => (f.call(f.a.users.owner, 'rates.listItems', { folder_id: f.a.folderId }) as { items: Item[] }).items;
const newItem = (code: string, price_cents: number) => ({ folder_id: f.a.folderId, code, name: 'Follow-up', item_type: 'consultation', price_cents });

/** The admin renames the fixture's item A01 ($90.00) → A01-OLD on a form; the owner approves. */
function renameA01(): void {
  const r = submitForm(f.db, f.a.users.admin, { verb: 'rates.updateItem', input: { id: f.a.itemId, code: 'A01-OLD' } }, now);
  if (r.status !== 'review') throw new Error('expected review');
  expect(r.proposal.status).toBe('needs_owner');
  expect(r.proposal.decisions.find((d) => d.code === 'fee_code_change_needs_owner')?.reason).toMatch(/A01 becomes free for another item/);
  approveProposal(f.db, { approverUserId: f.a.users.owner, changesetId: r.proposal.id, contentHash: r.proposal.contentHash, now });
  expect(item(f.a.itemId).code).toBe('A01-OLD');
}

describe('a fee code used before carries its last price', () => {
  it('after an approved rename, a new item under the old code at $9,999.00 waits for an owner (form) or is refused (verb.call); nothing is written', () => {
    renameA01();
    const r = submitForm(f.db, f.a.users.admin, { verb: 'rates.createItem', input: newItem('A01', 999_900) }, now);
    if (r.status !== 'review') throw new Error('expected review, got applied');
    expect(r.proposal.status).toBe('needs_owner');
    const d = r.proposal.decisions.find((x) => x.code === 'fee_code_reuse_needs_owner');
    expect(d?.reason).toBe(
      'Fee code A01 was last billed at $90.00 by item "Initial assessment" (now A01-OLD); the new item at $9,999.00 is a 11010% rise from it (over 20%); an owner must approve this change in the app.',
    );
    expect(() => f.call(f.a.users.admin, 'rates.createItem', newItem('a01', 999_900))).toThrow(
      expect.objectContaining({ code: 'Forbidden', message: expect.stringMatching(/Fee code a01 was last billed at \$90\.00/) }),
    );
    expect(items().filter((i) => i.code.toLowerCase() === 'a01')).toEqual([]);
    // Within 20 % of the old price it is an ordinary new item.
    f.call(f.a.users.admin, 'rates.createItem', newItem('A01', 10_000));
    expect(items().find((i) => i.code === 'A01')?.price_cents).toBe(10_000);
  });

  it('renaming another item to a freed code is judged against that code’s last price too (both reasons shown)', () => {
    renameA01();
    const other = f.call(f.a.users.owner, 'rates.createItem', newItem('B02', 30_000)).changeset.changes[0].id as string;
    const r = submitForm(f.db, f.a.users.admin, { verb: 'rates.updateItem', input: { id: other, code: 'A01' } }, now);
    if (r.status !== 'review') throw new Error('expected review');
    expect(r.proposal.decisions.map((d) => d.code)).toEqual(['fee_code_change_needs_owner', 'fee_code_reuse_needs_owner']);
    expect(r.proposal.decisions[1]!.reason).toMatch(
      /^Fee code A01 was last billed at \$90\.00 by item "Initial assessment" \(now A01-OLD\); this item at \$300\.00/,
    );
  });

  it('an item deleted (its creation undone) leaves its code with its price: recreating it at 5× waits for an owner', () => {
    const created = f.call(f.a.users.admin, 'rates.createItem', newItem('X01', 10_000)).changeset;
    f.call(f.a.users.admin, 'changesets.undo', { changeset_id: created.id });
    expect(items().some((i) => i.code === 'X01')).toBe(false);
    expect(() => f.call(f.a.users.admin, 'rates.createItem', newItem('X01', 50_000))).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/Fee code X01 was last billed at \$100\.00 by item "Follow-up" \(deleted\)/) }),
    );
    f.call(f.a.users.admin, 'rates.createItem', newItem('X01', 11_000));
  });

  it('an owner may reuse a code at another price, after seeing it as a diff', () => {
    renameA01();
    const r = submitForm(f.db, f.a.users.owner, { verb: 'rates.createItem', input: newItem('A01', 999_900) }, now);
    if (r.status !== 'review') throw new Error('expected review');
    expect(r.proposal.status).toBe('proposed');
    expect(r.notes.join(' ')).toMatch(/used before at a price more than 20 % away/);
    approveProposal(f.db, { approverUserId: f.a.users.owner, changesetId: r.proposal.id, contentHash: r.proposal.contentHash, now });
    expect(items().find((i) => i.code === 'A01')?.price_cents).toBe(999_900);
  });
});

describe('an owner approving the proposal of an account deactivated since', () => {
  it('is refused in words about the proposer, not "Your account is deactivated" (issue 13 re-review minor); nothing is written', () => {
    const r = submitForm(f.db, f.a.users.admin, { verb: 'rates.updateItem', input: { id: f.a.itemId, code: 'A01-OLD' } }, now);
    if (r.status !== 'review') throw new Error('expected review');
    f.call(f.a.users.owner, 'users.update', { id: f.a.users.admin, active: false });
    let message = '';
    try {
      approveProposal(f.db, { approverUserId: f.a.users.owner, changesetId: r.proposal.id, contentHash: r.proposal.contentHash, now });
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/, who asked for this change, is deactivated; nothing was written/);
    expect(message).not.toMatch(/^Your account/);
    expect(item(f.a.itemId).code).toBe('A01');
  });
});

describe('assistant budget caps: removing or raising a cap by more than 20 % needs an owner', () => {
  const cap = (userId: string) => getRow<{ budget_cap_usd: number | null }>(f.db, 'app_user', f.a.orgId, userId)!.budget_cap_usd;

  it('a user’s cap: set where none was and cut need no owner; removed (→ no cap) waits for an owner; an owner may remove it', () => {
    const user = f.a.users.athlete; // an account an administrator may change
    f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: 2 }); // none → $2: stricter
    expect(cap(user)).toBe(2);
    expect(() => f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: null })).toThrow(
      expect.objectContaining({
        code: 'Forbidden',
        message: expect.stringMatching(/The monthly assistant budget cap \$2\.00 → no cap removes the limit/),
      }),
    );
    expect(cap(user)).toBe(2);
    const r = submitForm(f.db, f.a.users.admin, { verb: 'users.update', input: { id: user, budget_cap_usd: null } }, now);
    expect(r.status === 'review' && r.proposal.status).toBe('needs_owner');
    expect(cap(user)).toBe(2);
    f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: 0.5 }); // a 75 % cut: stricter, no owner
    expect(cap(user)).toBe(0.5);
    f.call(f.a.users.owner, 'users.update', { id: user, budget_cap_usd: null });
    expect(cap(user)).toBeNull();
  });

  it('the organisation’s cap: an admin cannot raise it past 20 % or remove it (nothing saved); may cut it or raise it within 20 %; an owner may do either', () => {
    const deps = { db: f.db, tools: new ToolRegistry(), env: {} };
    const org = () => updateAssistantSettings(deps, f.a.users.admin, {}).org.cap_usd;
    expect(org()).toBe(50);
    expect(() => updateAssistantSettings(deps, f.a.users.admin, { budget_cap_usd: 5000 })).toThrow(
      expect.objectContaining({
        code: 'Forbidden',
        details: expect.objectContaining({ kind: 'PolicyDenied' }),
        message: expect.stringMatching(/The organisation's monthly assistant budget cap \$50\.00 → \$5,000\.00 is a 9900% rise/),
      }),
    );
    expect(() => updateAssistantSettings(deps, f.a.users.admin, { budget_cap_usd: null, disabled_tools: [] })).toThrow(
      expect.objectContaining({ code: 'Forbidden', message: expect.stringMatching(/\$50\.00 → no cap removes the limit/) }),
    );
    expect(org()).toBe(50);
    expect(updateAssistantSettings(deps, f.a.users.admin, { budget_cap_usd: 60 }).org.cap_usd).toBe(60);
    expect(updateAssistantSettings(deps, f.a.users.admin, { budget_cap_usd: 10 }).org.cap_usd).toBe(10);
    expect(updateAssistantSettings(deps, f.a.users.owner, { budget_cap_usd: 5000 }).org.cap_usd).toBe(5000);
    expect(updateAssistantSettings(deps, f.a.users.owner, { budget_cap_usd: null }).org.cap_usd).toBeNull();
    expect(updateAssistantSettings(deps, f.a.users.admin, { budget_cap_usd: 100 }).org.cap_usd).toBe(100);
  });
});

describe('assistant budget caps: steps within 20 % add up (issue 13 re-review: $200 → $238 → $283 passed)', () => {
  it('a user’s cap raised in two 19 % steps: the second waits for an owner (judged from the cap before the first)', () => {
    const user = f.a.users.athlete;
    f.call(f.a.users.owner, 'users.update', { id: user, budget_cap_usd: 2 });
    f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: 2.38 });
    expect(() => f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: 2.83 })).toThrow(
      expect.objectContaining({ code: 'Forbidden', message: expect.stringMatching(/\$2\.38 → \$2\.83 is a 41\.5% rise from \$2\.00/) }),
    );
    expect(getRow<{ budget_cap_usd: number | null }>(f.db, 'app_user', f.a.orgId, user)!.budget_cap_usd).toBe(2.38);
  });

  it('the organisation’s cap raised in 19 % steps by an admin: refused once it is more than 20 % above the cap an owner last set', () => {
    const deps = { db: f.db, tools: new ToolRegistry(), env: {} };
    expect(updateAssistantSettings(deps, f.a.users.owner, { budget_cap_usd: 200 }).org.cap_usd).toBe(200);
    expect(updateAssistantSettings(deps, f.a.users.admin, { budget_cap_usd: 238 }).org.cap_usd).toBe(238);
    expect(() => updateAssistantSettings(deps, f.a.users.admin, { budget_cap_usd: 283.22 })).toThrow(
      expect.objectContaining({
        code: 'Forbidden',
        message: expect.stringMatching(/\$238\.00 → \$283\.22 is a 41\.61% rise from \$200\.00, the cap an owner last set/),
      }),
    );
    expect(updateAssistantSettings(deps, f.a.users.admin, {}).org.cap_usd).toBe(238);
    // An owner re-bases it; the admin may then go within 20 % of the new value.
    expect(updateAssistantSettings(deps, f.a.users.owner, { budget_cap_usd: 300 }).org.cap_usd).toBe(300);
    expect(updateAssistantSettings(deps, f.a.users.admin, { budget_cap_usd: 360 }).org.cap_usd).toBe(360);
  });

  it('a user’s cap cut, then raised within 20 %: judged on rises only, not flagged as a cut from the owner’s value (issue 13 re-review: $10 → $5 → $5.50 waited)', () => {
    const user = f.a.users.athlete;
    f.call(f.a.users.owner, 'users.update', { id: user, budget_cap_usd: 10 });
    f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: 5 }); // a cut: allowed
    f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: 5.5 }); // a 10 % rise from $5, still below the owner's $10
    expect(getRow<{ budget_cap_usd: number | null }>(f.db, 'app_user', f.a.orgId, user)!.budget_cap_usd).toBe(5.5);
    const r = submitForm(f.db, f.a.users.admin, { verb: 'users.update', input: { id: user, budget_cap_usd: 6 } }, now);
    expect(r.status).toBe('applied');
    // Back up to the owner's $10 in steps within 20 %, and on to 20 % above it: what the owner's value allows.
    for (const v of [7.2, 8.64, 10, 12]) f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: v });
    expect(getRow<{ budget_cap_usd: number | null }>(f.db, 'app_user', f.a.orgId, user)!.budget_cap_usd).toBe(12);
    // Past 20 % above the owner's value the steps add up as before.
    expect(() => f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: 12.5 })).toThrow(
      expect.objectContaining({
        code: 'Forbidden',
        message: expect.stringMatching(/\$12\.00 → \$12\.50 is a 25% rise from \$10\.00, the value an owner last approved/),
      }),
    );
    // A single step of more than 20 % is still an owner's, below the owner's value too.
    f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: 4 });
    expect(() => f.call(f.a.users.admin, 'users.update', { id: user, budget_cap_usd: 8 })).toThrow(
      expect.objectContaining({ code: 'Forbidden', message: expect.stringMatching(/\$4\.00 → \$8\.00 is a 100% rise \(over 20%\)/) }),
    );
  });

  it('with no owner-set value on record (a seeded cap), the first admin step records the cap it started from', () => {
    const deps = { db: f.db, tools: new ToolRegistry(), env: {} };
    expect(updateAssistantSettings(deps, f.a.users.admin, { budget_cap_usd: 59 }).org.cap_usd).toBe(59); // from the seeded $50
    expect(() => updateAssistantSettings(deps, f.a.users.admin, { budget_cap_usd: 70 })).toThrow(expect.objectContaining({ code: 'Forbidden' }));
  });
});

describe('entry form review', () => {
  it('the same over-20 % form sent four times is one proposal waiting for an owner, and says so', () => {
    const send = () => submitForm(f.db, f.a.users.admin, { verb: 'rates.updateItem', input: { id: f.a.itemId, price_cents: 20_000 } }, now);
    const sent = [send(), send(), send(), send()];
    const ids = new Set(sent.map((r) => (r.status === 'review' ? r.proposal.id : 'applied')));
    expect(ids.size).toBe(1);
    expect(listProposals(f.db, f.a.users.owner, { status: 'needs_owner' }).filter((p) => p.verb === 'rates.updateItem')).toHaveLength(1);
    const last = sent[3]!;
    expect(last.status === 'review' && last.notes[0]).toMatch(
      /You already sent this same change .* waiting for an owner in Approvals, so it was not added again/,
    );
    // Another price is another proposal.
    const other = submitForm(f.db, f.a.users.admin, { verb: 'rates.updateItem', input: { id: f.a.itemId, price_cents: 30_000 } }, now);
    expect(other.status === 'review' && !ids.has(other.proposal.id)).toBe(true);
  });

  it('an owner’s own fee change over 20 % is shown as a diff first (proposed, not applied) and applied on Confirm; within 20 % it applies at once', () => {
    const r = submitForm(f.db, f.a.users.owner, { verb: 'rates.updateItem', input: { id: f.a.itemId, price_cents: 900_000 } }, now);
    if (r.status !== 'review') throw new Error('expected review, got applied');
    expect(r.proposal.status).toBe('proposed');
    expect(r.notes).toContain('A change of more than 20 % — check it before it is applied. Anyone but an owner would need an owner’s approval for it.');
    expect(r.proposal.changes).toEqual([expect.objectContaining({ before: { price_cents: 9000 }, after: { price_cents: 900_000 } })]);
    expect(item(f.a.itemId).price_cents).toBe(9000);
    approveProposal(f.db, { approverUserId: f.a.users.owner, changesetId: r.proposal.id, contentHash: r.proposal.contentHash, now });
    expect(item(f.a.itemId).price_cents).toBe(900_000);
    const small = submitForm(f.db, f.a.users.owner, { verb: 'rates.updateItem', input: { id: f.a.itemId, price_cents: 950_000 } }, now);
    expect(small.status).toBe('applied');
  });

  it('an owner’s code rename is shown first with the note that the old code becomes free', () => {
    const r = submitForm(f.db, f.a.users.owner, { verb: 'rates.updateItem', input: { id: f.a.itemId, code: 'A01-OLD' } }, now);
    if (r.status !== 'review') throw new Error('expected review');
    expect(r.proposal.status).toBe('proposed');
    expect(r.notes.join(' ')).toMatch(/the old code becomes free for another item/);
    expect(item(f.a.itemId).code).toBe('A01');
  });
});
