/**
 * Athlete entry forms: Add athlete, Edit athlete (refused with the current values when someone
 * changed the record since the form opened), Deactivate (a soft delete: every record is kept).
 * They submit `athletes.create` / `athletes.update` / `athletes.deactivate` through the one form
 * path (components/Form.tsx).
 */
import type { ReactNode } from 'react';
import { useState } from 'react';
import type { Athlete, Squad } from '../../../../models/records';
import { call } from '../../bridge';
import { Field, FormDialog, rebaseValues, shownRows, useEntryForm } from '../../components/Form';
import { formatDate, humanize, todayIso } from '../../format';

type SquadOption = Pick<Squad, 'id' | 'name'>;

interface AthleteValues {
  name: string;
  date_of_birth: string;
  sex: Athlete['sex'] | '';
  position: string;
  squad_id: string;
  dominant_side: Athlete['dominant_side'];
  notes: string;
}

function valuesOf(a: Athlete | null): AthleteValues {
  return {
    name: a?.name ?? '',
    date_of_birth: a?.date_of_birth ?? '',
    sex: a?.sex ?? '',
    position: a?.position ?? '',
    squad_id: a?.squad_id ?? '',
    dominant_side: a?.dominant_side ?? 'right',
    notes: a?.notes ?? '',
  };
}

/** What the service receives: empty optional text becomes null, as stored. */
function toInput(v: AthleteValues): Record<string, unknown> {
  return {
    name: v.name.trim(),
    date_of_birth: v.date_of_birth,
    ...(v.sex ? { sex: v.sex } : {}),
    position: v.position.trim() || null,
    squad_id: v.squad_id || null,
    dominant_side: v.dominant_side,
    notes: v.notes,
  };
}

/**
 * Add (no `athlete`) or edit an athlete. Edit sends only the fields the user changed, with the
 * version the form was opened with.
 */
export function AthleteFormDialog({
  athlete,
  squads,
  initial,
  intro,
  onClose,
  onSaved,
}: {
  athlete: Athlete | null;
  squads: readonly SquadOption[];
  /** Values to start from instead of the row's (re-planning a rejected sync change on the current row). */
  initial?: Partial<Athlete> | undefined;
  /** A note above the fields (why the form is open, e.g. re-planning a refused sync change). */
  intro?: ReactNode;
  onClose(): void;
  onSaved(summary: string): void;
}) {
  const [opened, setOpened] = useState<Athlete | null>(athlete);
  const [current, setCurrent] = useState<Athlete | null>(null);
  const [v, setV] = useState<AthleteValues>(() => valuesOf(initial ? ({ ...athlete, ...initial } as Athlete) : athlete));
  const form = useEntryForm(athlete ? 'athlete-edit' : 'athlete-add', {
    onSaved,
    onConflict: () => {
      if (!athlete) return;
      void call('athletes.get', { id: athlete.id }).then((a) => {
        // Untouched fields show (and keep) what is stored now; the user's own edits stay.
        setV((cur) => rebaseValues(cur, valuesOf(opened), valuesOf(a)));
        setCurrent(a);
        // The user has now seen the stored values: saving again is judged against them.
        setOpened(a);
      });
    },
  });
  const set = <K extends keyof AthleteValues>(k: K, value: AthleteValues[K]) => setV((x) => ({ ...x, [k]: value }));
  const squadName = (id: string | null) => squads.find((s) => s.id === id)?.name ?? '—';
  const now = (k: keyof AthleteValues, show: (a: Athlete) => string): string | null => {
    if (!current || !athlete) return null;
    const before = valuesOf(athlete)[k];
    return valuesOf(current)[k] !== before ? show(current) : null;
  };

  function submit() {
    const input = toInput(v);
    if (!athlete || !opened) {
      void form.submit('athletes.create', input);
      return;
    }
    const base = toInput(valuesOf(opened));
    const patch = Object.fromEntries(Object.entries(input).filter(([k, x]) => x !== base[k]));
    void form.submit('athletes.update', { id: athlete.id, ...patch }, shownRows(opened));
  }

  return (
    <FormDialog
      form={form}
      title={athlete ? `Edit ${athlete.name}` : 'Add athlete'}
      intro={intro}
      submitLabel={athlete ? 'Save changes' : 'Add athlete'}
      onSubmit={submit}
      onClose={onClose}
    >
      <Field label="Full name" name="name" form={form} current={now('name', (a) => a.name)}>
        <input type="text" value={v.name} onChange={(e) => set('name', e.target.value)} maxLength={200} autoComplete="off" required />
      </Field>
      <Field label="Date of birth" name="date_of_birth" form={form} current={now('date_of_birth', (a) => formatDate(a.date_of_birth))}>
        <input type="date" value={v.date_of_birth} max={todayIso()} onChange={(e) => set('date_of_birth', e.target.value)} required />
      </Field>
      <Field label="Sex" name="sex" form={form} current={now('sex', (a) => humanize(a.sex))}>
        <select value={v.sex} onChange={(e) => set('sex', e.target.value as AthleteValues['sex'])} required>
          <option value="">Choose…</option>
          <option value="female">Female</option>
          <option value="male">Male</option>
          <option value="other">Other</option>
        </select>
      </Field>
      <Field label="Squad" name="squad_id" form={form} current={now('squad_id', (a) => squadName(a.squad_id))}>
        <select value={v.squad_id} onChange={(e) => set('squad_id', e.target.value)}>
          <option value="">No squad</option>
          {squads.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Position" name="position" form={form} hint="e.g. Midfield" current={now('position', (a) => a.position ?? '—')}>
        <input type="text" value={v.position} onChange={(e) => set('position', e.target.value)} maxLength={60} />
      </Field>
      <Field label="Dominant side" name="dominant_side" form={form} current={now('dominant_side', (a) => humanize(a.dominant_side))}>
        <select value={v.dominant_side} onChange={(e) => set('dominant_side', e.target.value as AthleteValues['dominant_side'])}>
          <option value="right">Right</option>
          <option value="left">Left</option>
          <option value="both">Both</option>
        </select>
      </Field>
      <Field label="Notes" name="notes" form={form} wide current={now('notes', (a) => a.notes || '—')}>
        <textarea value={v.notes} onChange={(e) => set('notes', e.target.value)} maxLength={5000} />
      </Field>
    </FormDialog>
  );
}

/** Deactivate an athlete (soft delete): hidden from active lists, every record kept. */
export function DeactivateAthleteDialog({ athlete, onClose, onSaved }: { athlete: Athlete; onClose(): void; onSaved(summary: string): void }) {
  const [reason, setReason] = useState('');
  const form = useEntryForm('athlete-deactivate', { onSaved });
  return (
    <FormDialog
      form={form}
      title={`Deactivate ${athlete.name}?`}
      submitLabel="Deactivate athlete"
      danger
      onSubmit={() => void form.submit('athletes.deactivate', { id: athlete.id, reason: reason.trim() }, shownRows(athlete))}
      onClose={onClose}
      intro={
        <p>
          {athlete.name} will leave the active athlete lists and squad counts. <strong>Nothing is deleted:</strong> injuries, RTP entries, screenings, wellness,
          vitals and workload stay on record and can still be read (tick “Include deactivated” in Athletes). Undo this change from Activity to reverse it.
        </p>
      }
    >
      <Field label="Reason" name="reason" form={form} hint="Optional, e.g. left the club" wide>
        <input type="text" value={reason} onChange={(e) => setReason(e.target.value)} maxLength={500} />
      </Field>
    </FormDialog>
  );
}
