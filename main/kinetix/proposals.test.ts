/**
 * The proposals API on a real SQLite file: propose (policy at proposal, nothing written), approve
 * bound to the content hash, who may approve, idempotent retry, stale → Conflict, decline.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { getChangeset, listActivity } from '../data/changesets';
import { getRow } from '../data/rows';
import { VERBS } from '../services';
import { planWrite, type WriteVerb } from '../services/verb';
import { createClinicFixture, fixtureNow, type ClinicFixture } from '../testing/clinic-fixture';
import { approveProposal, declineProposal, getProposal, listProposals, proposeChangeset, STALE_MESSAGE } from './proposals';
import { PolicyDenied } from '../services/verb';

let f: ClinicFixture;
beforeEach(() => {
  f = createClinicFixture();
});
afterEach(() => f.close());

const plan = (userId: string, verb: string, input: unknown) => planWrite(f.as(userId), VERBS.get(verb) as WriteVerb, input).planned;
const price = () => getRow<{ price_cents: number; version: number }>(f.db, 'rate_item', f.a.orgId, f.a.itemId)!;

describe('proposeChangeset', () => {
  it('stores a proposed changeset with hash and policy decisions; nothing else is written', () => {
    const physio = f.a.users.physio;
    const before = price();
    const activityBefore = listActivity(f.db, f.a.orgId).length;
    const planned = plan(physio, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: 10 });
    const p = proposeChangeset(f.db, {
      userId: physio,
      planned,
      source: 'mcp',
      toolName: 'bulk_update_rates',
      title: 'Change prices',
      permission: 'rates.write',
      now: fixtureNow(),
    });
    expect(p).toMatchObject({ status: 'proposed', verdict: 'allow', source: 'mcp', userId: physio, approverRole: null, toolName: 'bulk_update_rates' });
    expect(p.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(p.decisions.map((d) => d.code)).toEqual(['within_limits']);
    expect(price()).toEqual(before);
    expect(listActivity(f.db, f.a.orgId)).toHaveLength(activityBefore);
    expect(getChangeset(f.db, f.a.orgId, p.id)!.status).toBe('proposed');
    expect(listProposals(f.db, physio, { status: 'proposed' }).map((x) => x.id)).toEqual([p.id]);
  });

  it('a deny verdict is refused with PolicyDenied and nothing is stored', () => {
    const physio = f.a.users.physio;
    const it0 = price();
    const planned = {
      verb: 'rates.updateItem',
      summary: 'x',
      changes: [
        {
          op: 'update' as const,
          table: 'rate_item' as const,
          id: f.a.itemId,
          version: it0.version,
          before: { price_cents: it0.price_cents },
          after: { price_cents: 50 },
        },
      ],
    };
    expect(() => proposeChangeset(f.db, { userId: physio, planned, source: 'assistant', toolName: 'update_rate_item', title: 't', now: fixtureNow() })).toThrow(
      PolicyDenied,
    );
    expect(listProposals(f.db, physio)).toHaveLength(0);
  });
});

describe('approveProposal', () => {
  it('only the proposing user approves a proposed change; bound to the content hash; a retry returns the first result', () => {
    const physio = f.a.users.physio;
    const planned = plan(physio, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: 10 });
    const p = proposeChangeset(f.db, { userId: physio, planned, source: 'mcp', toolName: 'bulk_update_rates', title: 'Change prices', now: fixtureNow() });
    expect(() => approveProposal(f.db, { approverUserId: f.a.users.doctor, changesetId: p.id, contentHash: p.contentHash })).toThrow(/not found/);
    expect(() => approveProposal(f.db, { approverUserId: f.b.users.owner, changesetId: p.id, contentHash: p.contentHash })).toThrow(/not found/);
    expect(() => approveProposal(f.db, { approverUserId: physio, changesetId: p.id, contentHash: 'f'.repeat(64) })).toThrow(/different content/);
    const before = price().price_cents;
    const r = approveProposal(f.db, { approverUserId: physio, changesetId: p.id, contentHash: p.contentHash, now: fixtureNow() });
    expect(r.changeset.id).toBe(p.id);
    expect(r.changeset.replayed).toBe(false);
    expect(r.proposal).toMatchObject({ status: 'applied', decidedBy: physio });
    expect(price().price_cents).toBe(Math.round(before * 1.1));
    const again = approveProposal(f.db, { approverUserId: physio, changesetId: p.id, contentHash: p.contentHash });
    expect(again.changeset.replayed).toBe(true);
    expect(again.changeset.activity_id).toBe(r.changeset.activity_id);
    expect(price().price_cents).toBe(Math.round(before * 1.1));
    expect(getChangeset(f.db, f.a.orgId, p.id)).toMatchObject({ status: 'applied' });
  });

  it('an approval replayed for a different changeset is refused', () => {
    const physio = f.a.users.physio;
    const p1 = proposeChangeset(f.db, {
      userId: physio,
      planned: plan(physio, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: 5 }),
      source: 'assistant',
      toolName: 'bulk_update_rates',
      title: 't',
      now: fixtureNow(),
    });
    const p2 = proposeChangeset(f.db, {
      userId: physio,
      planned: plan(physio, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: 10 }),
      source: 'assistant',
      toolName: 'bulk_update_rates',
      title: 't',
      now: fixtureNow(),
    });
    const before = price();
    expect(() => approveProposal(f.db, { approverUserId: physio, changesetId: p2.id, contentHash: p1.contentHash })).toThrow(/different content/);
    expect(price()).toEqual(before);
    expect(getProposal(f.db, physio, p2.id).status).toBe('proposed');
  });

  it('stale before approval → Conflict with the stale message, nothing written, proposal failed', () => {
    const physio = f.a.users.physio;
    const p = proposeChangeset(f.db, {
      userId: physio,
      planned: plan(physio, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: 10 }),
      source: 'assistant',
      toolName: 'bulk_update_rates',
      title: 't',
      now: fixtureNow(),
    });
    f.call(f.a.users.owner, 'rates.updateItem', { id: f.a.itemId, price_cents: 9100 });
    const before = price();
    const acts = listActivity(f.db, f.a.orgId).length;
    expect(() => approveProposal(f.db, { approverUserId: physio, changesetId: p.id, contentHash: p.contentHash })).toThrow(STALE_MESSAGE);
    expect(price()).toEqual(before);
    expect(listActivity(f.db, f.a.orgId)).toHaveLength(acts);
    const after = getProposal(f.db, physio, p.id);
    expect(after.status).toBe('failed');
    expect(after.failure).toMatchObject({ code: 'Conflict', message: STALE_MESSAGE });
    expect(() => approveProposal(f.db, { approverUserId: physio, changesetId: p.id, contentHash: p.contentHash })).toThrow(/already failed/);
  });

  it("needs owner: a physio's 25% rise waits; the physio cannot approve; the owner can; activity says via Assistant", () => {
    const physio = f.a.users.physio;
    const runId = '0193aaaa-0000-7000-8000-000000000001';
    const p = proposeChangeset(f.db, {
      userId: physio,
      planned: plan(physio, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: 25 }),
      source: 'assistant',
      runId,
      toolName: 'bulk_update_rates',
      title: 't',
      now: fixtureNow(),
    });
    expect(p).toMatchObject({ status: 'needs_owner', verdict: 'needs_owner', approverRole: 'owner' });
    expect(p.decisions[0]).toMatchObject({ code: 'numeric_change_needs_owner', effect: 'needs_owner' });
    expect(() => approveProposal(f.db, { approverUserId: physio, changesetId: p.id, contentHash: p.contentHash })).toThrow(/Only an owner/);
    expect(() => approveProposal(f.db, { approverUserId: f.a.users.admin, changesetId: p.id, contentHash: p.contentHash })).toThrow(/not found/);
    expect(listProposals(f.db, f.a.users.owner, { status: 'needs_owner' }).map((x) => x.id)).toEqual([p.id]);
    const before = price().price_cents;
    const r = approveProposal(f.db, { approverUserId: f.a.users.owner, changesetId: p.id, contentHash: p.contentHash, now: fixtureNow() });
    expect(price().price_cents).toBe(Math.round(before * 1.25));
    expect(r.proposal).toMatchObject({ status: 'applied', decidedBy: f.a.users.owner });
    const act = listActivity(f.db, f.a.orgId).find((a) => a.changeset_id === p.id)!;
    expect(act.actor_name).toBe('Northbridge physio via Assistant');
    expect(act.run_id).toBe(runId);
    // The owner still sees it, decided; and it can be undone like any applied change.
    expect(listProposals(f.db, f.a.users.owner, { status: 'applied' }).map((x) => x.id)).toEqual([p.id]);
    f.call(f.a.users.owner, 'changesets.undo', { changeset_id: p.id });
    expect(price().price_cents).toBe(before);
    expect(getChangeset(f.db, f.a.orgId, p.id)!.status).toBe('undone');
  });

  it('decline: the proposer withdraws; an owner declines a needs-owner change; others cannot', () => {
    const physio = f.a.users.physio;
    const p = proposeChangeset(f.db, {
      userId: physio,
      planned: plan(physio, 'rates.bulkUpdate', { folder_id: f.a.folderId, pct: 30 }),
      source: 'mcp',
      toolName: 'bulk_update_rates',
      title: 't',
      now: fixtureNow(),
    });
    expect(() => declineProposal(f.db, { userId: f.a.users.doctor, changesetId: p.id })).toThrow(/not found/);
    expect(declineProposal(f.db, { userId: f.a.users.owner, changesetId: p.id }).status).toBe('declined');
    expect(() => approveProposal(f.db, { approverUserId: f.a.users.owner, changesetId: p.id, contentHash: p.contentHash })).toThrow(
      /not found|already declined/,
    );
    expect(getChangeset(f.db, f.a.orgId, p.id)!.status).toBe('declined');
  });
});
