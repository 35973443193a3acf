/** Screening results, newest first, with Record screening and Correct for the roles that hold screening.write. */
import { useEffect, useState } from 'react';
import type { Screening } from '../../../../models/records';
import { hasPermission } from '../../../../models/roles';
import { call } from '../../bridge';
import { Field, FormDialog, rebaseValues, shownRows, useEntryForm } from '../../components/Form';
import { ErrorNote } from '../../components/Page';
import { SCREENING_TESTS } from '../../../../models/screening-tests';
import { useLoad } from '../../components/useLoad';
import { formatDate, humanize, numberInput, todayIso } from '../../format';
import { useSession } from '../../store';

/** The club's screening tests and the unit each is measured in (models/screening-tests.ts). */
const TESTS = SCREENING_TESTS;

export function ScreeningsTab({
  athleteId,
  onState,
  onSaved,
}: {
  athleteId: string;
  onState: (s: 'loading' | 'ready' | 'error') => void;
  onSaved(s: string): void;
}) {
  const me = useSession((s) => s.me)!;
  const canWrite = hasPermission(me.role, 'screening.write');
  const [dialog, setDialog] = useState<{ row: Screening | null } | null>(null);
  const data = useLoad(() => call('screenings.list', { athlete_id: athleteId, limit: 500 }), athleteId);
  useEffect(() => onState(data.state), [data.state, onState]);
  const dialogs = dialog ? (
    <ScreeningFormDialog
      athleteId={athleteId}
      row={dialog.row}
      onClose={() => setDialog(null)}
      onSaved={(s) => {
        setDialog(null);
        onSaved(s);
      }}
    />
  ) : null;
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return dialogs;
  return (
    <div className="stack">
      {dialogs}
      {canWrite ? (
        <div className="row-actions">
          <button type="button" className="primary" data-action="add-screening" onClick={() => setDialog({ row: null })}>
            Record screening
          </button>
        </div>
      ) : null}
      {data.data.screenings.length === 0 ? (
        <p className="muted">No screenings recorded.</p>
      ) : (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">Test</th>
              <th scope="col">Side</th>
              <th scope="col" className="num">
                Value
              </th>
              <th scope="col">Notes</th>
              {canWrite ? (
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              ) : null}
            </tr>
          </thead>
          <tbody>
            {data.data.screenings.map((s) => (
              <tr key={s.id} data-screening={s.id}>
                <td>{formatDate(s.date)}</td>
                <th scope="row">{humanize(s.test)}</th>
                <td>{humanize(s.side)}</td>
                <td className="num">
                  {s.value} {s.unit}
                </td>
                <td>{s.notes || <span className="muted">—</span>}</td>
                {canWrite ? (
                  <td>
                    <button type="button" className="link" data-action="correct-screening" onClick={() => setDialog({ row: s })}>
                      Correct…
                    </button>
                  </td>
                ) : null}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** A screening row as the form's text values (a new screening: today, nothing else filled in). */
function screeningValues(row: Screening | null) {
  return {
    test: row?.test ?? '',
    side: row?.side ?? '',
    value: row ? String(row.value) : '',
    unit: row?.unit ?? '',
    date: row?.date ?? todayIso(),
    notes: row?.notes ?? '',
  };
}

/** Record a screening result, or correct one (with the version it was opened with). */
function ScreeningFormDialog({ athleteId, row, onClose, onSaved }: { athleteId: string; row: Screening | null; onClose(): void; onSaved(s: string): void }) {
  const [opened, setOpened] = useState<Screening | null>(row);
  const [current, setCurrent] = useState<Screening | null>(null);
  const [v, setV] = useState(() => screeningValues(row));
  const form = useEntryForm(row ? 'screening-edit' : 'screening-add', {
    onSaved,
    onConflict: () => {
      if (row)
        void call('screenings.get', { id: row.id }).then((x) => {
          setV((cur) => rebaseValues(cur, screeningValues(opened), screeningValues(x)));
          setCurrent(x);
          setOpened(x);
        });
    },
  });
  const set = (k: keyof typeof v, value: string) => setV((x) => ({ ...x, [k]: value }));
  const pickTest = (test: string) => setV((x) => ({ ...x, test, unit: TESTS.find((t) => t.test === test)?.unit ?? x.unit }));
  const now = (k: keyof Screening, show: (x: Screening) => string) => (current && row && current[k] !== row[k] ? show(current) : null);
  function submit() {
    const input: Record<string, unknown> = {
      test: v.test,
      unit: v.unit.trim(),
      date: v.date,
      notes: v.notes,
      value: numberInput(v.value),
    };
    if (v.side) input.side = v.side;
    if (!row || !opened) {
      void form.submit('screenings.create', { athlete_id: athleteId, ...input });
      return;
    }
    const patch = Object.fromEntries(Object.entries(input).filter(([k, x]) => x !== (opened as unknown as Record<string, unknown>)[k]));
    void form.submit('screenings.update', { id: row.id, ...patch }, shownRows(opened));
  }
  const test = TESTS.find((t) => t.test === v.test);
  return (
    <FormDialog
      form={form}
      title={row ? `Correct ${humanize(row.test).toLowerCase()} (${formatDate(row.date)})` : 'Record screening'}
      submitLabel={row ? 'Save correction' : 'Record screening'}
      onSubmit={submit}
      onClose={onClose}
    >
      <Field label="Test" name="test" form={form} current={now('test', (x) => humanize(x.test))}>
        <select value={v.test} onChange={(e) => pickTest(e.target.value)}>
          <option value="">Choose…</option>
          {TESTS.map((t) => (
            <option key={t.test} value={t.test}>
              {humanize(t.test)}
            </option>
          ))}
          {row && !TESTS.some((t) => t.test === row.test) ? <option value={row.test}>{humanize(row.test)}</option> : null}
        </select>
      </Field>
      <Field label="Side" name="side" form={form} current={now('side', (x) => humanize(x.side))}>
        <select value={v.side} onChange={(e) => set('side', e.target.value)}>
          <option value="">Choose…</option>
          <option value="left">Left</option>
          <option value="right">Right</option>
          <option value="bilateral">Both (bilateral)</option>
          <option value="none">Not sided</option>
        </select>
      </Field>
      <Field
        label="Result"
        unit={v.unit || undefined}
        name="value"
        form={form}
        {...(test ? { hint: test.hint } : {})}
        current={now('value', (x) => `${x.value} ${x.unit}`)}
      >
        <input type="text" inputMode="decimal" value={v.value} onChange={(e) => set('value', e.target.value)} />
      </Field>
      <Field label="Unit" name="unit" form={form} hint="e.g. cm, N, s">
        <input type="text" value={v.unit} maxLength={20} onChange={(e) => set('unit', e.target.value)} />
      </Field>
      <Field label="Date" name="date" form={form} current={now('date', (x) => formatDate(x.date))}>
        <input type="date" value={v.date} max={todayIso()} onChange={(e) => set('date', e.target.value)} />
      </Field>
      <Field label="Notes" name="notes" form={form} wide current={now('notes', (x) => x.notes || '—')}>
        <textarea value={v.notes} maxLength={5000} onChange={(e) => set('notes', e.target.value)} />
      </Field>
    </FormDialog>
  );
}
