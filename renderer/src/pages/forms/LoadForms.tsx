/**
 * Workload entry forms: Log session load for one athlete or a whole squad (session minutes and
 * RPE, per-athlete minutes/RPE, athletes left out), and Add training session. Before saving, the
 * form warns when athletes already have a load that day: a second session is legitimate, a silent
 * duplicate inflates ACWR, so the user says which it is (a box to tick: a quick second Enter
 * cannot skip the warning). Nothing is sent before that check has answered, and a check that
 * fails is shown as an error, never read as "no duplicates". Load (AU) = RPE × minutes (Foster et al.
 * 2001). A squad load is reviewed as a table (rows can still be left out) before it is applied.
 */
import { useRef, useState } from 'react';
import type { Athlete, SessionLoad } from '../../../../models/records';
import { CallError, call } from '../../bridge';
import { Field, FormDialog, useEntryForm } from '../../components/Form';
import { SameDayCheckError, SameDayWarning } from '../../components/SameDayWarning';
import { formatDate, todayIso } from '../../format';

interface Row {
  athlete: Pick<Athlete, 'id' | 'name'>;
  include: boolean;
  minutes: string;
  rpe: string;
}

/** Athletes (by name) who already have a load on `date`, with what is stored. */
interface Duplicate {
  name: string;
  loads: Pick<SessionLoad, 'duration_min' | 'rpe' | 'load_au'>[];
}

async function existingLoads(date: string, target: { athlete_id: string } | { squad_id: string }, names: ReadonlyMap<string, string>): Promise<Duplicate[]> {
  const r = await call('workload.listLoads', { ...target, from: date, to: date, limit: 1000 });
  const by = new Map<string, Duplicate>();
  for (const l of r.loads) {
    if (!names.has(l.athlete_id)) continue;
    const d = by.get(l.athlete_id) ?? { name: names.get(l.athlete_id)!, loads: [] };
    d.loads.push(l);
    by.set(l.athlete_id, d);
  }
  return [...by.values()].sort((a, b) => a.name.localeCompare(b.name));
}

const num = (s: string): number | undefined => (s.trim() === '' ? undefined : Number(s));

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
  const [dupes, setDupes] = useState<Duplicate[] | null>(null);
  // The user's answer to the duplicate warning: another session that day (not the same one again).
  const [second, setSecond] = useState(false);
  const [checking, setChecking] = useState(false);
  const [checkError, setCheckError] = useState<string | null>(null);
  // A check in flight: a second press (Enter held, a double click) waits for it, never skips it.
  const inFlight = useRef(false);
  const form = useEntryForm(squad ? 'load-squad' : 'load-athlete', {
    onSaved,
    labels: { per_athlete: 'Athletes in this load', exclude_athlete_ids: 'Include' },
  });
  const name = squad ? squad.name : athlete!.name;

  function input(): Record<string, unknown> {
    const base: Record<string, unknown> = { date: v.date, duration_min: num(v.minutes), rpe: num(v.rpe) };
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

  /** Forget the duplicate check (the date or the athletes changed): the next press checks again. */
  function recheck() {
    setDupes(null);
    setSecond(false);
    setCheckError(null);
  }

  async function submit() {
    if (inFlight.current) return;
    if (dupes === null) {
      // First press: look for loads already stored that day for the athletes about to be logged.
      // Nothing is sent until the check has answered; a failed check is an error, never "no duplicates".
      inFlight.current = true;
      setChecking(true);
      setCheckError(null);
      let found: Duplicate[];
      try {
        const names = new Map(squad ? rows.filter((r) => r.include).map((r) => [r.athlete.id, r.athlete.name]) : [[athlete!.id, athlete!.name]]);
        found = v.date ? await existingLoads(v.date, squad ? { squad_id: squad.id } : { athlete_id: athlete!.id }, names) : [];
      } catch (e) {
        setCheckError(
          `Could not check for loads already stored on this day (${e instanceof CallError ? e.payload.message : 'no answer'}). Nothing was saved: try again.`,
        );
        return;
      } finally {
        inFlight.current = false;
        setChecking(false);
      }
      if (found.length > 0) {
        setDupes(found);
        return;
      }
    } else if (dupes.length > 0 && !second) return;
    void form.submit('workload.logSessionLoads', input());
  }

  const setRow = (i: number, patch: Partial<Row>) => {
    recheck();
    setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  };
  const included = rows.filter((r) => r.include).length;
  const au = (m: string, r: string) => (num(m) !== undefined && num(r) !== undefined ? Math.round(num(m)! * num(r)! * 100) / 100 : null);
  return (
    <FormDialog
      form={form}
      title={`Log session load — ${name}`}
      submitLabel={
        dupes ? 'Log anyway: a second session' : checking ? 'Checking…' : squad ? `Log for ${included} athlete${included === 1 ? '' : 's'}` : 'Log load'
      }
      wide={Boolean(squad)}
      submitDisabled={checking || (dupes !== null && dupes.length > 0 && !second)}
      onSubmit={() => void submit()}
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
        <input
          type="number"
          inputMode="numeric"
          min={1}
          max={600}
          step={1}
          value={v.minutes}
          onChange={(e) => setV((x) => ({ ...x, minutes: e.target.value }))}
        />
      </Field>
      <Field label="Session RPE" unit="CR-10, 0–10" name="rpe" form={form} hint="Asked ~30 min after the session">
        <input type="number" inputMode="decimal" min={0} max={10} step={0.5} value={v.rpe} onChange={(e) => setV((x) => ({ ...x, rpe: e.target.value }))} />
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
                      type="number"
                      min={1}
                      max={600}
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
                      type="number"
                      min={0}
                      max={10}
                      step={0.5}
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
          items={dupes.map((d) => `${d.name}: ${d.loads.map((l) => `${l.duration_min} min × RPE ${l.rpe} = ${l.load_au} AU`).join('; ')}`)}
          advice="A second session that day is fine. If this is the same session entered again, cancel: a duplicate doubles that day's load and inflates ACWR."
          confirmLabel="This is another session that day, not the same one entered again"
          action="confirm-second-session"
          checked={second}
          onChange={setSecond}
        />
      ) : null}
      <SameDayCheckError message={checkError} />
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
        <input type="number" min={1} max={600} value={v.minutes} onChange={(e) => set('minutes', e.target.value)} />
      </Field>
      <Field label="Notes" name="notes" form={form} wide>
        <textarea value={v.notes} maxLength={2000} onChange={(e) => set('notes', e.target.value)} />
      </Field>
    </FormDialog>
  );
}
