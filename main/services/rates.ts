/** The clinic's fee schedule: folders (Private, Insurer, Club) and items with prices in USD cents. */
import { Conflict, ValidationError } from '../../models/errors';
import type { RateFolder, RateItem } from '../../models/records';
import { getRow, listRows } from '../data/rows';
import { visibleRow } from './scope';
import { defined, insertRow, updateRow } from './plan';
import type { VerbContext } from './verb';
import { readVerb, writeVerb } from './verb';

function folder(vc: VerbContext, id: string): RateFolder {
  return visibleRow<RateFolder>(vc, 'rate_folder', id, 'Fee-schedule folder');
}

export const getSchedule = readVerb('rates.schedule', {
  run(vc) {
    const folders = listRows<RateFolder>(vc.db, 'rate_folder', vc.actor.orgId, { orderBy: [{ column: 'name' }] });
    const items = listRows<RateItem>(vc.db, 'rate_item', vc.actor.orgId, { orderBy: [{ column: 'code' }], limit: 100_000 });
    return { folders: folders.map((f) => ({ ...f, items: items.filter((it) => it.folder_id === f.id) })) };
  },
});

export const listFolders = readVerb('rates.listFolders', {
  run: (vc) => ({ folders: listRows<RateFolder>(vc.db, 'rate_folder', vc.actor.orgId, { orderBy: [{ column: 'name' }] }) }),
});

export const listItems = readVerb('rates.listItems', {
  run(vc, i) {
    if (i.folder_id) folder(vc, i.folder_id);
    return {
      items: listRows<RateItem>(vc.db, 'rate_item', vc.actor.orgId, {
        eq: { folder_id: i.folder_id, item_type: i.item_type },
        orderBy: [{ column: 'code' }],
        limit: i.limit,
        offset: i.offset,
      }),
    };
  },
});

/** Folder names are unique in an organisation, ignoring case: two "Private" folders would split one schedule. @throws Conflict */
export const createFolder = writeVerb('rates.createFolder', {
  plan(vc, i) {
    const same = listRows<RateFolder>(vc.db, 'rate_folder', vc.actor.orgId, { ieq: { name: i.name }, limit: 1 })[0];
    if (same) throw new Conflict(`There is already a fee folder named ${same.name}; add the items there, or choose another name. Nothing was saved.`);
    return { planned: { verb: 'rates.createFolder', summary: `Create fee folder ${i.name}`, changes: [insertRow('rate_folder', i)] } };
  },
});

/** Fee codes are unique in an organisation (across folders), ignoring case: a code names one billable item. @throws Conflict */
function uniqueItemCode(vc: VerbContext, code: string, self?: string): void {
  const same = listRows<RateItem>(vc.db, 'rate_item', vc.actor.orgId, { ieq: { code }, limit: 2 }).find((it) => it.id !== self);
  if (same) {
    const where = getRow<{ name: string }>(vc.db, 'rate_folder', vc.actor.orgId, same.folder_id)?.name ?? 'another folder';
    throw new Conflict(`${where} already has an item with code ${same.code} (${same.name}); choose another code or update that item. Nothing was saved.`);
  }
}

export const createItem = writeVerb('rates.createItem', {
  plan(vc, i) {
    const f = folder(vc, i.folder_id);
    uniqueItemCode(vc, i.code);
    return { planned: { verb: 'rates.createItem', summary: `Add ${i.code} ${i.name} to ${f.name}`, changes: [insertRow('rate_item', i)] } };
  },
});

export const updateItem = writeVerb('rates.updateItem', {
  plan(vc, i) {
    const it = visibleRow<RateItem>(vc, 'rate_item', i.id, 'Fee-schedule item');
    if (i.code !== undefined) uniqueItemCode(vc, i.code, it.id);
    const { id: _id, ...patch } = i;
    const change = updateRow('rate_item', it, defined(patch));
    return { planned: { verb: 'rates.updateItem', summary: `Update fee item ${it.code}`, changes: change ? [change] : [] } };
  },
});

export const bulkUpdate = writeVerb('rates.bulkUpdate', {
  plan(vc, i) {
    const f = folder(vc, i.folder_id);
    const items = listRows<RateItem>(vc.db, 'rate_item', vc.actor.orgId, {
      eq: { folder_id: f.id, item_type: i.item_type },
      orderBy: [{ column: 'code' }],
      limit: 100_000,
    });
    const priced = items.map((it) => ({ it, price: Math.round(it.price_cents * (1 + i.pct / 100)) }));
    const outOfRange = priced.filter((p) => p.price < 100 || p.price > 1_000_000);
    if (outOfRange.length > 0) {
      const list = outOfRange
        .slice(0, 5)
        .map((p) => `${p.it.code} ($${(p.it.price_cents / 100).toFixed(2)} → $${(p.price / 100).toFixed(2)})`)
        .join(', ');
      throw new ValidationError(
        `A ${i.pct}% change would take ${outOfRange.length} price(s) outside $1–$10,000: ${list}. Nothing was changed; use a smaller percentage or narrow it with item_type.`,
        // The form shows this next to the percentage field: it names the items, not just "out of bounds".
        [{ path: 'pct', message: `Takes ${outOfRange.length} price(s) outside $1–$10,000: ${list}${outOfRange.length > 5 ? ', …' : ''}.` }],
      );
    }
    const changes = priced.map(({ it, price }) => updateRow('rate_item', it, { price_cents: price })).filter((c) => c !== null);
    return {
      planned: {
        verb: 'rates.bulkUpdate',
        summary: `${i.pct >= 0 ? 'Raise' : 'Lower'} ${changes.length} ${i.item_type ?? ''} price(s) in ${f.name} by ${Math.abs(i.pct)}%`.replace('  ', ' '),
        changes,
      },
    };
  },
});
