/**
 * The clinic's fee schedule: folders and their items (prices in USD). For roles with rates.write:
 * Add folder, Add item (to a folder), Edit an item, and Change prices by a percentage for a folder — reviewed as a table before it is
 * applied; a change of more than 20 % waits for an owner's approval (the policy engine's rule).
 */
import { useState } from 'react';
import type { RateFolder, RateItem } from '../../../models/records';
import { RateItemType } from '../../../models/records';
import { hasPermission } from '../../../models/roles';
import { call } from '../bridge';
import { Field, FormDialog, SavedNote, rebaseValues, shownRows, useEntryForm } from '../components/Form';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { formatCents, humanize, numberInput, parseUsdCents } from '../format';
import { useSession } from '../store';

const ITEM_TYPES = RateItemType.options;

type Open =
  | { kind: 'item'; item: RateItem }
  | { kind: 'bulk'; folder: RateFolder & { items: RateItem[] } }
  | { kind: 'add-item'; folder: RateFolder }
  | { kind: 'add-folder' }
  | null;

export function Fees() {
  const me = useSession((s) => s.me)!;
  const canWrite = hasPermission(me.role, 'rates.write');
  const data = useLoad(() => call('rates.schedule', {}), 'fees');
  const [open, setOpen] = useState<Open>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const done = (s: string) => {
    setOpen(null);
    setSaved(s);
  };
  return (
    <Page
      page="fees"
      state={data.state}
      title="Fee schedule"
      actions={
        canWrite ? (
          <button
            type="button"
            data-action="add-folder"
            onClick={() => {
              setSaved(null);
              setOpen({ kind: 'add-folder' });
            }}
          >
            Add folder
          </button>
        ) : null
      }
    >
      {open?.kind === 'item' ? <RateItemDialog item={open.item} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'bulk' ? <BulkRateDialog folder={open.folder} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'add-item' ? <AddItemDialog folder={open.folder} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'add-folder' ? <AddFolderDialog onClose={() => setOpen(null)} onSaved={done} /> : null}
      <SavedNote text={saved} />
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {data.state === 'ready' ? (
        <div className="stack">
          {data.data.folders.length === 0 ? <p className="muted">No fee folders yet.</p> : null}
          {data.data.folders.map((f) => (
            <section key={f.id} className="card" aria-labelledby={`fee-${f.id}`} data-folder={f.name}>
              <header className="card-head">
                <h2 id={`fee-${f.id}`}>{f.name}</h2>
                {canWrite ? (
                  <button
                    type="button"
                    data-action="add-item"
                    onClick={() => {
                      setSaved(null);
                      setOpen({ kind: 'add-item', folder: f });
                    }}
                  >
                    Add item…
                  </button>
                ) : null}
                {canWrite && f.items.length ? (
                  <button
                    type="button"
                    data-action="bulk-rates"
                    onClick={() => {
                      setSaved(null);
                      setOpen({ kind: 'bulk', folder: f });
                    }}
                  >
                    Change prices by %…
                  </button>
                ) : null}
              </header>
              <table className="table">
                <thead>
                  <tr>
                    <th scope="col">Code</th>
                    <th scope="col">Item</th>
                    <th scope="col">Type</th>
                    <th scope="col" className="num">
                      Price
                    </th>
                    {canWrite ? (
                      <th scope="col">
                        <span className="sr-only">Actions</span>
                      </th>
                    ) : null}
                  </tr>
                </thead>
                <tbody>
                  {f.items.map((i) => (
                    <tr key={i.id} data-rate-item={i.code}>
                      <td>
                        <code>{i.code}</code>
                      </td>
                      <th scope="row">{i.name}</th>
                      <td>{humanize(i.item_type)}</td>
                      <td className="num">{formatCents(i.price_cents)}</td>
                      {canWrite ? (
                        <td>
                          <button
                            type="button"
                            className="link"
                            data-action="edit-item"
                            onClick={() => {
                              setSaved(null);
                              setOpen({ kind: 'item', item: i });
                            }}
                          >
                            Edit…
                          </button>
                        </td>
                      ) : null}
                    </tr>
                  ))}
                </tbody>
              </table>
            </section>
          ))}
        </div>
      ) : null}
    </Page>
  );
}

/**
 * A price field's service message in dollars: the schema counts cents ("Too small: at least 100."
 * would read as $100), and text that is not a price gets how to type one.
 */
function priceIssue(message: string | null): string | null {
  if (message === null) return null;
  const n = /^Too (small|large): at (least|most) (\d+)\.$/.exec(message);
  if (n) return `Too ${n[1]}: at ${n[2]} ${formatCents(Number(n[3]))}.`;
  if (/^Enter a number/.test(message) || /expected number/i.test(message))
    return 'Enter a price in dollars, e.g. 61.50: a point before the cents, no spaces inside; a comma only between thousands (1,250.00).';
  return message;
}

/** Edit one fee item (code, name, type, price in USD), against the version it was opened with. */
function RateItemDialog({ item, onClose, onSaved }: { item: RateItem; onClose(): void; onSaved(s: string): void }) {
  const valuesOf = (x: RateItem) => ({ code: x.code, name: x.name, item_type: x.item_type as string, price: (x.price_cents / 100).toFixed(2) });
  const [opened, setOpened] = useState<RateItem>(item);
  const [current, setCurrent] = useState<RateItem | null>(null);
  const [v, setV] = useState(() => valuesOf(item));
  const form = useEntryForm('rate-item-edit', {
    onSaved,
    onConflict: () => {
      // Stale: show what is stored now, keep the user's own edits, and save against the stored version.
      void call('rates.listItems', { folder_id: item.folder_id, limit: 500 }).then((r) => {
        const x = r.items.find((i) => i.id === item.id);
        if (!x) return;
        setV((cur) => rebaseValues(cur, valuesOf(opened), valuesOf(x)));
        setCurrent(x);
        setOpened(x);
      });
    },
  });
  const priceForm = { ...form, issueFor: (n: string) => (n === 'price_cents' ? priceIssue(form.issueFor(n)) : form.issueFor(n)) };
  const set = (k: keyof typeof v, value: string) => setV((x) => ({ ...x, [k]: value }));
  const now = (k: keyof RateItem, show: (x: RateItem) => string) => (current && current[k] !== item[k] ? show(current) : null);
  function submit() {
    const price = parseUsdCents(v.price);
    const patch: Record<string, unknown> = {};
    if (v.code.trim() !== opened.code) patch.code = v.code.trim();
    if (v.name.trim() !== opened.name) patch.name = v.name.trim();
    if (v.item_type !== opened.item_type) patch.item_type = v.item_type;
    // An emptied price is not "no change": it is refused at the field like any other non-price.
    if (price !== opened.price_cents) patch.price_cents = price === undefined || Number.isNaN(price) ? v.price.trim() : price;
    void form.submit('rates.updateItem', { id: item.id, ...patch }, shownRows(opened));
  }
  return (
    <FormDialog
      form={form}
      title={`Edit ${item.code} ${item.name}`}
      submitLabel="Save item"
      onSubmit={submit}
      onClose={onClose}
      intro={<p className="small muted">A price change of more than 20 % waits for an owner's approval; prices stay between $1 and $10,000.</p>}
    >
      <Field label="Code" name="code" form={form} current={now('code', (x) => x.code)}>
        <input type="text" value={v.code} maxLength={20} onChange={(e) => set('code', e.target.value)} />
      </Field>
      <Field label="Item" name="name" form={form} current={now('name', (x) => x.name)}>
        <input type="text" value={v.name} maxLength={200} onChange={(e) => set('name', e.target.value)} />
      </Field>
      <Field label="Item type" name="item_type" form={form}>
        <select value={v.item_type} onChange={(e) => set('item_type', e.target.value)}>
          {[...new Set([...ITEM_TYPES, item.item_type])].map((t) => (
            <option key={t} value={t}>
              {humanize(t)}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Price"
        unit="USD"
        name="price_cents"
        form={priceForm}
        hint={`Was ${formatCents(item.price_cents)} when opened; e.g. 61.50`}
        current={now('price_cents', (x) => formatCents(x.price_cents))}
      >
        <input type="text" inputMode="decimal" value={v.price} onChange={(e) => set('price', e.target.value)} />
      </Field>
    </FormDialog>
  );
}

/** Add an item to a folder: code (unique in the club), name, type and price in USD. */
function AddItemDialog({ folder, onClose, onSaved }: { folder: RateFolder; onClose(): void; onSaved(s: string): void }) {
  const [v, setV] = useState({ code: '', name: '', item_type: '', price: '' });
  const form = useEntryForm('rate-item-add', { onSaved });
  const priceForm = { ...form, issueFor: (n: string) => (n === 'price_cents' ? priceIssue(form.issueFor(n)) : form.issueFor(n)) };
  const set = (k: keyof typeof v, value: string) => setV((x) => ({ ...x, [k]: value }));
  function submit() {
    const price = parseUsdCents(v.price);
    void form.submit('rates.createItem', {
      folder_id: folder.id,
      code: v.code,
      name: v.name,
      item_type: v.item_type || undefined,
      // Not a price (or empty): sent as typed, refused at the field.
      price_cents: price === undefined || Number.isNaN(price) ? v.price.trim() : price,
    });
  }
  return (
    <FormDialog
      form={form}
      title={`Add item — ${folder.name}`}
      submitLabel="Add item"
      onSubmit={submit}
      onClose={onClose}
      intro={<p className="small muted">Codes are unique in the club (ignoring case); prices between $1 and $10,000.</p>}
    >
      <Field label="Code" name="code" form={form} hint="e.g. PHY-01">
        <input type="text" value={v.code} maxLength={20} autoComplete="off" onChange={(e) => set('code', e.target.value)} />
      </Field>
      <Field label="Item" name="name" form={form}>
        <input type="text" value={v.name} maxLength={200} onChange={(e) => set('name', e.target.value)} />
      </Field>
      <Field label="Item type" name="item_type" form={form}>
        <select value={v.item_type} onChange={(e) => set('item_type', e.target.value)}>
          <option value="">Choose…</option>
          {ITEM_TYPES.map((t) => (
            <option key={t} value={t}>
              {humanize(t)}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Price" unit="USD" name="price_cents" form={priceForm} hint="e.g. 61.50">
        <input type="text" inputMode="decimal" value={v.price} onChange={(e) => set('price', e.target.value)} />
      </Field>
    </FormDialog>
  );
}

/** Add a fee-schedule folder (e.g. "Insurer"). */
function AddFolderDialog({ onClose, onSaved }: { onClose(): void; onSaved(s: string): void }) {
  const [name, setName] = useState('');
  const form = useEntryForm('rate-folder-add', { onSaved });
  return (
    <FormDialog form={form} title="Add fee folder" submitLabel="Add folder" onSubmit={() => void form.submit('rates.createFolder', { name })} onClose={onClose}>
      <Field label="Folder name" name="name" form={form} hint="e.g. Insurer, Private">
        <input type="text" value={name} maxLength={100} onChange={(e) => setName(e.target.value)} />
      </Field>
    </FormDialog>
  );
}

/** Change every price of a folder by a percentage (−50…50); reviewed as a table first. */
function BulkRateDialog({ folder, onClose, onSaved }: { folder: RateFolder & { items: RateItem[] }; onClose(): void; onSaved(s: string): void }) {
  const [pct, setPct] = useState('');
  const [type, setType] = useState('');
  const form = useEntryForm('rates-bulk', { onSaved });
  const p = numberInput(pct);
  return (
    <FormDialog
      form={form}
      title={`Change prices — ${folder.name}`}
      submitLabel="Review the new prices"
      onClose={onClose}
      onSubmit={() => void form.submit('rates.bulkUpdate', { folder_id: folder.id, pct: p, ...(type ? { item_type: type } : {}) })}
      intro={
        <p className="small muted">
          Every item of the folder (or of one type) changes by the same percentage, rounded to the cent. You see each new price before anything is written; more
          than 20 % from the price an owner last approved (or from any price of the last 30 days) waits for an owner.
        </p>
      }
    >
      <Field label="Change" unit="%" name="pct" form={form} hint="e.g. 5 for +5 %, −3 for −3 % (−50 to 50)">
        <input type="text" inputMode="decimal" value={pct} onChange={(e) => setPct(e.target.value)} />
      </Field>
      <Field label="Only items of type" name="item_type" form={form}>
        <select value={type} onChange={(e) => setType(e.target.value)}>
          <option value="">All items</option>
          {[...new Set(folder.items.map((i) => i.item_type))].map((t) => (
            <option key={t} value={t}>
              {humanize(t)}
            </option>
          ))}
        </select>
      </Field>
    </FormDialog>
  );
}
