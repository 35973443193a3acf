/**
 * Squad entry forms: Add squad, Rename (name and season; refused with the current values when
 * someone changed the squad since the form opened), and Move athletes between squads. They submit
 * `squads.create` / `squads.update` / `squads.moveAthletes` through the one form path
 * (components/Form.tsx): moving more than one athlete is a changeset of several rows, so it is
 * shown as a diff (a table where rows can be left out, from four athletes) before it is applied.
 */
import { useMemo, useState } from 'react';
import type { Athlete, Squad } from '../../../../models/records';
import { call } from '../../bridge';
import { Field, FormDialog, rebaseValues, shownRows, useEntryForm } from '../../components/Form';

type SquadRow = Pick<Squad, 'id' | 'name' | 'season' | 'version' | 'updated_at'>;

/** The season a new squad starts with: `2026/27` from August, `2025/26` before. */
function currentSeason(d = new Date()): string {
  const y = d.getUTCMonth() >= 7 ? d.getUTCFullYear() : d.getUTCFullYear() - 1;
  return `${y}/${String((y + 1) % 100).padStart(2, '0')}`;
}

/** Add (no `squad`) or rename a squad. Rename sends only what changed, with the version and updated_at the form opened with. */
export function SquadFormDialog({ squad, onClose, onSaved }: { squad: SquadRow | null; onClose(): void; onSaved(summary: string): void }) {
  const [opened, setOpened] = useState<SquadRow | null>(squad);
  const [current, setCurrent] = useState<SquadRow | null>(null);
  const [v, setV] = useState({ name: squad?.name ?? '', season: squad?.season ?? currentSeason() });
  const form = useEntryForm(squad ? 'squad-edit' : 'squad-add', {
    onSaved,
    onConflict: () => {
      if (!squad) return;
      void call('squads.get', { id: squad.id }).then((s) => {
        const pick = (r: SquadRow | null) => ({ name: r?.name ?? '', season: r?.season ?? '' });
        setV((cur) => rebaseValues(cur, pick(opened), pick(s)));
        setCurrent(s);
        setOpened(s);
      });
    },
  });
  const now = (k: 'name' | 'season'): string | null => (current && squad && current[k] !== squad[k] ? current[k] : null);
  function submit() {
    const input = { name: v.name.trim(), season: v.season.trim() };
    if (!squad || !opened) {
      void form.submit('squads.create', input);
      return;
    }
    const patch = Object.fromEntries(Object.entries(input).filter(([k, x]) => x !== opened[k as 'name' | 'season']));
    void form.submit('squads.update', { id: squad.id, ...patch }, shownRows(opened));
  }
  return (
    <FormDialog
      form={form}
      title={squad ? `Rename ${squad.name}` : 'Add squad'}
      submitLabel={squad ? 'Save changes' : 'Add squad'}
      onSubmit={submit}
      onClose={onClose}
    >
      <Field label="Squad name" name="name" form={form} hint="e.g. U19, First team" current={now('name')}>
        <input type="text" value={v.name} onChange={(e) => setV((x) => ({ ...x, name: e.target.value }))} maxLength={100} autoComplete="off" required />
      </Field>
      <Field label="Season" name="season" form={form} hint="e.g. 2026/27" current={now('season')}>
        <input type="text" value={v.season} onChange={(e) => setV((x) => ({ ...x, season: e.target.value }))} maxLength={20} required />
      </Field>
    </FormDialog>
  );
}

/** The pseudo-squad "No squad" in the From/To selects. */
const NONE = '';

/**
 * Move athletes between squads: choose where from (a squad, or athletes in no squad), tick the
 * athletes, choose where to. Each moved athlete is one row of the changeset, planned against the
 * version of the athlete the form listed (the form quotes that version and its updated_at).
 */
export function MoveAthletesDialog({
  from,
  squads,
  athletes,
  onClose,
  onSaved,
}: {
  /** The squad the form opens on (null: athletes in no squad). */
  from: string | null;
  squads: readonly Pick<Squad, 'id' | 'name'>[];
  /** Every active athlete (with squad, version and updated_at). */
  athletes: readonly Pick<Athlete, 'id' | 'name' | 'squad_id' | 'version' | 'updated_at'>[];
  onClose(): void;
  onSaved(summary: string): void;
}) {
  const [source, setSource] = useState<string>(from ?? NONE);
  const [target, setTarget] = useState<string>(() => squads.find((s) => s.id !== from)?.id ?? NONE);
  const [picked, setPicked] = useState<Set<string>>(new Set());
  const form = useEntryForm('squad-move', { onSaved, labels: { athlete_ids: 'Athletes' } });
  const members = useMemo(() => athletes.filter((a) => (a.squad_id ?? NONE) === source), [athletes, source]);
  const nameOf = (id: string) => (id === NONE ? 'No squad' : (squads.find((s) => s.id === id)?.name ?? '—'));
  const issue = form.issueFor('athlete_ids');
  function submit() {
    const moved = members.filter((a) => picked.has(a.id));
    void form.submit('squads.moveAthletes', { athlete_ids: moved.map((a) => a.id), squad_id: target === NONE ? null : target }, shownRows(...moved));
  }
  const n = members.filter((a) => picked.has(a.id)).length;
  return (
    <FormDialog
      form={form}
      title="Move athletes between squads"
      submitLabel={n > 0 ? `Move ${n} athlete${n === 1 ? '' : 's'} to ${nameOf(target)}` : 'Move athletes'}
      onSubmit={submit}
      onClose={onClose}
      wide
      intro={
        <p className="small muted">Records stay with each athlete; only their squad changes. Moving more than one athlete is shown as a change to review.</p>
      }
    >
      <Field label="From" name="from" form={form}>
        <select
          value={source}
          onChange={(e) => {
            setSource(e.target.value);
            setPicked(new Set());
          }}
        >
          {squads.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
          <option value={NONE}>No squad</option>
        </select>
      </Field>
      <Field label="To" name="squad_id" form={form}>
        <select value={target} onChange={(e) => setTarget(e.target.value)}>
          {squads.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
          <option value={NONE}>No squad</option>
        </select>
      </Field>
      <fieldset className={`field wide${issue ? ' invalid' : ''}`} data-field="athlete_ids" aria-invalid={issue ? true : undefined}>
        <legend>
          Athletes in {nameOf(source)} ({members.length})
        </legend>
        {members.length === 0 ? <p className="small muted">No active athletes here.</p> : null}
        {members.length > 1 ? (
          <label className="check">
            <input
              type="checkbox"
              checked={n === members.length}
              onChange={(e) => setPicked(e.target.checked ? new Set(members.map((a) => a.id)) : new Set())}
              data-action="pick-all"
            />
            All of {nameOf(source)}
          </label>
        ) : null}
        <div className="check-list">
          {members.map((a) => (
            <label key={a.id} className="check" data-move-athlete={a.name}>
              <input
                type="checkbox"
                checked={picked.has(a.id)}
                onChange={(e) =>
                  setPicked((p) => {
                    const next = new Set(p);
                    if (e.target.checked) next.add(a.id);
                    else next.delete(a.id);
                    return next;
                  })
                }
              />
              {a.name}
            </label>
          ))}
        </div>
        {issue ? (
          <span className="field-error" role="alert">
            {issue === 'Too small: at least 1.' ? 'Tick at least one athlete.' : issue}
          </span>
        ) : null}
      </fieldset>
    </FormDialog>
  );
}
