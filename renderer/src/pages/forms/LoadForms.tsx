/**
 * Workload entry forms: Log session load for one athlete or a whole squad (session minutes and
 * RPE, per-athlete minutes/RPE, athletes left out), and Add training session. The same-day check
 * is the service's (`workload.logSessionLoads` refuses a load on a day where an athlete of the
 * call already has one, Conflict `SameDayExists` naming each with that load's minutes/RPE/AU,
 * unless `second_session_same_day` is sent): the form shows that answer as a warning with a box
 * to tick (a second session is legitimate, a silent duplicate inflates ACWR; a quick second Enter
 * cannot skip it) and sends the acknowledgement only once it is ticked. Load (AU) = RPE × minutes
 * (Foster et al. 2001). A squad load is reviewed as a table (rows can still be left out) before it
 * is applied.
 */
import { useState } from 'react';
import type { Athlete } from '../../../../models/records';
import { Field, FormDialog, useEntryForm } from '../../components/Form';
import { SameDayWarning } from '../../components/SameDayWarning';
import { formatDate, numberInput, todayIso } from '../../format';

interface Row {
  athlete: Pick<Athlete, 'id' | 'name'>;
  include: boolean;
  minutes: string;
  rpe: string;
}

const num = numberInput;

/**
 * Log a session load. `squad` set: every active athlete of the squad, listed with their own
 * minutes/RPE and an include box; otherwise the one `athlete`.
 */
export function LoadFormDialog({
  squad,
  athlete,
  members,
  onClose,
  onSaved,
}: {
  squad: { id: string; name: string } | null;
  athlete: Pick<Athlete, 'id' | 'name'> | null;
  /** Active squad members (squad form). */
  members?: Pick<Athlete, 'id' | 'name'>[];
  onClose(): void;
  onSaved(s: string): void;
}) {
  const [v, setV] = useState({ date: todayIso(), minutes: '', rpe: '' });
  const [rows, setRows] = useState<Row[]>(() => (members ?? []).map((a) => ({ athlete: a, include: true, minutes: '', rpe: '' })));
  // The user's answer to the duplicate warning: another session that day (not the same one again).
  const [second, setSecond] = useState(false);
  const form = useEntryForm(squad ? 'load-squad' : 'load-athlete', {
    onSaved,
    labels: { per_athlete: 'Athletes in this load', exclude_athlete_ids: 'Include' },
  });
  const name = squad ? squad.name : athlete!.name;
  // The service's same-day answer (one line per athlete with a load that day), kept while the user
  // decides (a later validation error must not hide it).
  const [dupes, setDupes] = useState<string[] | null>(null);
  const [seenError, setSeenError] = useState(form.error);
  if (form.error !== seenError) {
    setSeenError(form.error);
    if (form.error?.kind === 'SameDayExists') setDupes((form.error.issues ?? []).map((i) => i.message));
  }

  function input(): Record<string, unknown> {
    const base: Record<string, unknown> = {
      date: v.date,
      duration_min: num(v.minutes),
      rpe: num(v.rpe),
      ...(dupes !== null && second ? { second_session_same_day: true } : {}),
    };
    if (!squad) return { ...base, athlete_id: athlete!.id };
    return {
      ...base,
      squad_id: squad.id,
      exclude_athlete_ids: rows.filter((r) => !r.include).map((r) => r.athlete.id),
      per_athlete: rows
        .filter((r) => r.include && (r.minutes.trim() || r.rpe.trim()))
        .map((r) => ({
          athlete_id: r.athlete.id,
          ...(r.minutes.trim() ? { duration_min: num(r.minutes) } : {}),
          ...(r.rpe.trim() ? { rpe: num(r.rpe) } : {}),
        })),
    };
  }

  /** Forget the service's same-day answer (the date or the athletes changed): the next press asks again. */
  function recheck() {
    setDupes(null);
    setSecond(false);
  }

  const submit = () => void form.submit('workload.logSessionLoads', input());

  const setRow = (i: number, patch: Partial<Row>) => {
    recheck();
    setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  };
  const included = rows.filter((r) => r.include).length;
  const au = (m: string, r: string) => {
    const [mm, rr] = [num(m), num(r)];
    return typeof mm === 'number' && typeof rr === 'number' ? Math.round(mm * rr * 100) / 100 : null;
  };
  return (
    <FormDialog
      form={form}
      title={`Log session load — ${name}`}
      submitLabel={dupes ? 'Log anyway: a second session' : squad ? `Log for ${included} athlete${included === 1 ? '' : 's'}` : 'Log load'}
      wide={Boolean(squad)}
      submitDisabled={dupes !== null && !second}
      onSubmit={submit}
      onClose={onClose}
      intro={<p className="small muted">Load (AU) = session RPE (CR-10, 0–10) × minutes. Leave the per-athlete boxes empty to use the session values.</p>}
    >
      <Field label="Date" name="date" form={form}>
        <input
          type="date"
          value={v.date}
          max={todayIso()}
          onChange={(e) => {
            recheck();
            setV((x) => ({ ...x, date: e.target.value }));
          }}
        />
      </Field>
      <Field label="Duration" unit="min" name="duration_min" form={form} hint="1–600">
        <input type="text" inputMode="numeric" value={v.minutes} onChange={(e) => setV((x) => ({ ...x, minutes: e.target.value }))} />
      </Field>
      <Field label="Session RPE" unit="CR-10, 0–10" name="rpe" form={form} hint="Asked ~30 min after the session">
        <input type="text" inputMode="decimal" value={v.rpe} onChange={(e) => setV((x) => ({ ...x, rpe: e.target.value }))} />
      </Field>
      {squad ? (
        <div className="field wide" data-field="per_athlete">
          <table className="table bulk" aria-label="Athletes in this load">
            <thead>
              <tr>
                <th scope="col">Include</th>
                <th scope="col">Athlete</th>
                <th scope="col" className="num">
                  Minutes
                </th>
                <th scope="col" className="num">
                  RPE
                </th>
                <th scope="col" className="num">
                  Load (AU)
                </th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={r.athlete.id} data-load-athlete={r.athlete.name} className={r.include ? '' : 'dropped'}>
                  <td>
                    <input
                      type="checkbox"
                      checked={r.include}
                      onChange={(e) => setRow(i, { include: e.target.checked })}
                      aria-label={`Include ${r.athlete.name}`}
                    />
                  </td>
                  <th scope="row">{r.athlete.name}</th>
                  <td className="num">
                    <input
                      type="text"
                      inputMode="decimal"
                      className="narrow"
                      placeholder={v.minutes || '—'}
                      value={r.minutes}
                      disabled={!r.include}
                      onChange={(e) => setRow(i, { minutes: e.target.value })}
                      aria-label={`Minutes for ${r.athlete.name}`}
                    />
                  </td>
                  <td className="num">
                    <input
                      type="text"
                      inputMode="decimal"
                      className="narrow"
                      placeholder={v.rpe || '—'}
                      value={r.rpe}
                      disabled={!r.include}
                      onChange={(e) => setRow(i, { rpe: e.target.value })}
                      aria-label={`RPE for ${r.athlete.name}`}
                    />
                  </td>
                  <td className="num">{r.include ? (au(r.minutes || v.minutes, r.rpe || v.rpe) ?? '—') : 'left out'}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {form.issueFor('per_athlete') ? (
            <span className="field-error" role="alert">
              {form.issueFor('per_athlete')}
            </span>
          ) : null}
        </div>
      ) : null}
      {dupes ? (
        <SameDayWarning
          title={`${dupes.length === 1 && !squad ? `${name} already has` : `${dupes.length} athlete${dupes.length === 1 ? ' already has' : 's already have'}`} a load on ${formatDate(v.date)}`}
          items={dupes}
          advice="A second session that day is fine. If this is the same session entered again, cancel: a duplicate doubles that day's load and inflates ACWR."
          confirmLabel="This is another session that day, not the same one entered again"
          action="confirm-second-session"
          checked={second}
          onChange={setSecond}
        />
      ) : null}
    </FormDialog>
  );
}

/** Add a training session (a squad's or the club's) on a date. */
export function SessionFormDialog({ squads, onClose, onSaved }: { squads: { id: string; name: string }[]; onClose(): void; onSaved(s: string): void }) {
  const [v, setV] = useState({ squad_id: '', date: todayIso(), kind: '', minutes: '', notes: '' });
  const form = useEntryForm('session-add', { onSaved });
  const set = (k: keyof typeof v, value: string) => setV((x) => ({ ...x, [k]: value }));
  return (
    <FormDialog
      form={form}
      title="Add training session"
      submitLabel="Add session"
      onClose={onClose}
      onSubmit={() =>
        void form.submit('sessions.create', { squad_id: v.squad_id || null, date: v.date, kind: v.kind.trim(), duration_min: num(v.minutes), notes: v.notes })
      }
    >
      <Field label="Squad" name="squad_id" form={form}>
        <select value={v.squad_id} onChange={(e) => set('squad_id', e.target.value)}>
          <option value="">No squad (individual)</option>
          {squads.map((s) => (
            <option key={s.id} value={s.id}>
              {s.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Date" name="date" form={form}>
        <input type="date" value={v.date} onChange={(e) => set('date', e.target.value)} />
      </Field>
      <Field label="Session type" name="kind" form={form} hint="e.g. pitch, gym, recovery">
        <input type="text" list="session-kinds" value={v.kind} maxLength={60} onChange={(e) => set('kind', e.target.value)} />
      </Field>
      <datalist id="session-kinds">
        {['pitch', 'gym', 'recovery', 'match', 'conditioning'].map((k) => (
          <option key={k} value={k} />
        ))}
      </datalist>
      <Field label="Planned duration" unit="min" name="duration_min" form={form} hint="1–600">
        <input type="text" inputMode="decimal" value={v.minutes} onChange={(e) => set('minutes', e.target.value)} />
      </Field>
      <Field label="Notes" name="notes" form={form} wide>
        <textarea value={v.notes} maxLength={2000} onChange={(e) => set('notes', e.target.value)} />
      </Field>
    </FormDialog>
  );
}
