/**
 * Daily wellness (1–5 scales) and vitals (resting HR, HRV) over the last six weeks: one small
 * chart per measure, heart rate and HRV each on its own axis. The day's questionnaire starts from
 * what is already stored (never from made-up defaults), asks "already submitted today — replace?"
 * before it changes stored answers, and shows an athlete their own answers back; Record vitals
 * for the roles that hold vitals.write.
 */
import { useEffect, useState } from 'react';
import type { Vitals, Wellness } from '../../../../models/records';
import { hasPermission } from '../../../../models/roles';
import { call } from '../../bridge';
import { LineChart } from '../../components/Charts';
import { Field, FormDialog, FormMessages, NOTHING_STORED, shownRows, useEntryForm } from '../../components/Form';
import { ErrorNote } from '../../components/Page';
import { SameDayWarning } from '../../components/SameDayWarning';
import { useLoad } from '../../components/useLoad';
import { addDays, formatDate, formatDateTime, numberInput, todayIso } from '../../format';
import { useSession } from '../../store';

const DAYS = 42;

/** A y axis in whole tens around `values` (min, middle, max ticks). */
function axis(values: number[]): { min: number; max: number; ticks: number[] } {
  const min = Math.max(0, Math.floor((Math.min(...values) - 5) / 10) * 10);
  const max = Math.ceil((Math.max(...values) + 5) / 10) * 10;
  return { min, max, ticks: [min, Math.round((min + max) / 2), max] };
}

/** Dates from the latest record back DAYS days, oldest first. */
function window42(latest: string): string[] {
  return Array.from({ length: DAYS }, (_, i) => addDays(latest, i - DAYS + 1));
}

export function WellnessTab({
  athleteId,
  onState,
  onSaved,
}: {
  athleteId: string;
  onState: (s: 'loading' | 'ready' | 'error') => void;
  onSaved(s: string): void;
}) {
  const me = useSession((s) => s.me)!;
  const [vitalsOpen, setVitalsOpen] = useState(false);
  const data = useLoad(async () => {
    const [w, v] = await Promise.all([
      hasPermission(me.role, 'wellness.read')
        ? call('wellness.list', { athlete_id: athleteId, limit: DAYS })
        : Promise.resolve({ total: 0, wellness: [] as Wellness[] }),
      hasPermission(me.role, 'vitals.read') ? call('vitals.list', { athlete_id: athleteId, limit: DAYS }) : Promise.resolve(null),
    ]);
    return { wellness: w.wellness, vitals: v?.vitals ?? null, canReadWellness: hasPermission(me.role, 'wellness.read') };
  }, athleteId);
  useEffect(() => onState(data.state), [data.state, onState]);
  const form = hasPermission(me.role, 'wellness.write') ? <WellnessForm athleteId={athleteId} onSaved={onSaved} /> : null;
  const canVitals = hasPermission(me.role, 'vitals.write');
  return (
    <div className="stack">
      {form}
      {canVitals ? (
        <div className="row-actions">
          <button type="button" data-action="record-vitals" onClick={() => setVitalsOpen(true)}>
            Record vitals…
          </button>
        </div>
      ) : null}
      {vitalsOpen ? (
        <VitalsFormDialog
          athleteId={athleteId}
          onClose={() => setVitalsOpen(false)}
          onSaved={(s) => {
            setVitalsOpen(false);
            onSaved(s);
          }}
        />
      ) : null}
      <WellnessBody data={data} />
    </div>
  );
}

function WellnessBody({ data }: { data: ReturnType<typeof useLoad<{ wellness: Wellness[]; vitals: Vitals[] | null; canReadWellness: boolean }>> }) {
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  const { wellness, vitals } = data.data;
  const latest = [wellness[0]?.date, vitals?.[0]?.date].filter(Boolean).sort().pop();
  if (!latest) return data.data.canReadWellness ? <p className="muted">No wellness or vitals recorded.</p> : null;
  const dates = window42(latest);
  const byDate = new Map<string, Wellness>(wellness.map((w) => [w.date, w]));
  const vByDate = new Map<string, Vitals>((vitals ?? []).map((v) => [v.date, v]));
  const labels = dates.map((d) => d.slice(5));
  const pick = (k: 'sleep' | 'soreness' | 'stress' | 'mood' | 'fatigue') => dates.map((d) => byDate.get(d)?.[k] ?? null);
  return (
    <>
      {wellness.length ? (
        <section aria-labelledby="wellness-charts-h">
          <h2 id="wellness-charts-h">Wellness, last {DAYS} days (1–5)</h2>
          <div className="small-multiples">
            {SCALES.map((sc, i) => (
              <LineChart
                key={sc.key}
                compact
                title={`${sc.label} (${sc.hint})`}
                labels={labels}
                min={1}
                max={5}
                ticks={[1, 3, 5]}
                series={[{ name: sc.label, tone: `s${i + 1}`, values: pick(sc.key) }]}
              />
            ))}
          </div>
        </section>
      ) : null}
      {vitals && vitals.length ? (
        <section aria-labelledby="vitals-charts-h">
          <h2 id="vitals-charts-h">Vitals, last {DAYS} days</h2>
          <div className="small-multiples">
            <LineChart
              compact
              title="Resting heart rate (bpm)"
              labels={labels}
              {...axis(vitals.map((v) => v.resting_hr_bpm))}
              series={[{ name: 'Resting HR (bpm)', tone: 's3', values: dates.map((d) => vByDate.get(d)?.resting_hr_bpm ?? null) }]}
            />
            <LineChart
              compact
              title="HRV rMSSD (ms)"
              labels={labels}
              {...axis(vitals.map((v) => v.hrv_rmssd_ms))}
              series={[{ name: 'HRV rMSSD (ms)', tone: 's1', values: dates.map((d) => vByDate.get(d)?.hrv_rmssd_ms ?? null) }]}
            />
          </div>
        </section>
      ) : null}
      {wellness.length ? <h2>Latest entries</h2> : null}
      {wellness.length ? (
        <table className="table">
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col" className="num">
                Sleep
              </th>
              <th scope="col" className="num">
                Soreness
              </th>
              <th scope="col" className="num">
                Stress
              </th>
              <th scope="col" className="num">
                Mood
              </th>
              <th scope="col" className="num">
                Fatigue
              </th>
              <th scope="col">Notes</th>
            </tr>
          </thead>
          <tbody>
            {wellness.slice(0, 7).map((w) => (
              <tr key={w.id}>
                <td>{formatDate(w.date)}</td>
                <td className="num">{w.sleep}</td>
                <td className="num">{w.soreness}</td>
                <td className="num">{w.stress}</td>
                <td className="num">{w.mood}</td>
                <td className="num">{w.fatigue}</td>
                <td>{w.notes || <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

const SCALES = [
  { key: 'sleep', label: 'Sleep', hint: '1 poor – 5 great' },
  { key: 'soreness', label: 'Soreness', hint: '1 none – 5 very sore' },
  { key: 'stress', label: 'Stress', hint: '1 none – 5 very high' },
  { key: 'mood', label: 'Mood', hint: '1 low – 5 great' },
  { key: 'fatigue', label: 'Fatigue', hint: '1 fresh – 5 exhausted' },
] as const;
type ScaleKey = (typeof SCALES)[number]['key'];
type Answers = Record<ScaleKey, number | null>;

const EMPTY: Answers = { sleep: null, soreness: null, stress: null, mood: null, fatigue: null };

function answersOf(w: Wellness | null): Answers {
  return w ? { sleep: w.sleep, soreness: w.soreness, stress: w.stress, mood: w.mood, fatigue: w.fatigue } : EMPTY;
}

/** Which stored row (version and updated_at: HQ's row can replace a refused local edit at the same version) a form shows: `none` when nothing is stored. */
function versionOf(row: Wellness | null): string {
  return row ? `${row.id}:${row.version}:${row.updated_at}` : 'none';
}

/**
 * Today's questionnaire. Starts from today's stored answers (an athlete reads their own back
 * here); with none stored every scale starts unanswered, and the submit expects that nothing is
 * stored (a row saved meanwhile by someone else is a conflict, never silently replaced). Changing
 * stored answers asks first. After a conflict the stored row is loaded again while the answers
 * being entered stay on screen, and "replace?" compares them with the current stored values.
 */
function WellnessForm({ athleteId, onSaved }: { athleteId: string; onSaved(s: string): void }) {
  const today = todayIso();
  const dayKey = `${athleteId}/${today}`;
  const stored = useLoad(() => call('wellness.getDay', { athlete_id: athleteId, date: today }), dayKey);
  // The last row loaded for this day stays on screen while it is loaded again (no unmount: the
  // answers being entered and the form's message survive a reload).
  const [shown, setShown] = useState<{ for: string; row: Wellness | null } | null>(null);
  if (stored.state === 'ready' && (shown?.for !== dayKey || shown.row !== stored.data)) setShown({ for: dayKey, row: stored.data });
  const row = shown?.for === dayKey ? shown : null;
  if (!row && stored.state === 'error') return <ErrorNote error={stored.error} />;
  if (!row)
    return (
      <p className="muted card" role="status">
        Loading today's answers…
      </p>
    );
  return <WellnessAnswers key={dayKey} athleteId={athleteId} today={today} row={row.row} onSaved={onSaved} onConflict={stored.reload} />;
}

function WellnessAnswers({
  athleteId,
  today,
  row,
  onSaved,
  onConflict,
}: {
  athleteId: string;
  today: string;
  row: Wellness | null;
  onSaved(s: string): void;
  /** Load the stored row again (the service said the form is stale). */
  onConflict(): void;
}) {
  const [values, setValues] = useState<Answers>(() => answersOf(row));
  const [notes, setNotes] = useState(row?.notes ?? '');
  const [confirming, setConfirming] = useState(false);
  const [unchanged, setUnchanged] = useState(false);
  // The scales are fieldsets, not Fields: their labels enter the form's label book here.
  const form = useEntryForm('wellness', { onSaved, onConflict, labels: Object.fromEntries(SCALES.map((sc) => [sc.key, sc.label])) });
  // A new stored row or version: after a save the answers start from it; after a conflict the
  // answers being entered stay and "replace?" is asked against the current stored values.
  const [seen, setSeen] = useState(versionOf(row));
  if (versionOf(row) !== seen) {
    setSeen(versionOf(row));
    if (form.state === 'conflict' && row) {
      const now = answersOf(row);
      const differs = SCALES.some((sc) => values[sc.key] !== now[sc.key]) || notes !== row.notes;
      setConfirming(differs);
      setUnchanged(!differs);
    } else {
      setValues(answersOf(row));
      setNotes(row?.notes ?? '');
      setConfirming(false);
    }
  }
  const before = answersOf(row);
  const changes = row
    ? SCALES.filter((sc) => values[sc.key] !== before[sc.key]).map((sc) => ({ label: sc.label, from: before[sc.key], to: values[sc.key] }))
    : [];
  const notesChanged = row ? notes !== row.notes : false;

  function send() {
    const input: Record<string, unknown> = { athlete_id: athleteId, date: today, notes };
    for (const sc of SCALES) if (values[sc.key] !== null) input[sc.key] = values[sc.key];
    setConfirming(false);
    void form.submit('wellness.submit', input, row ? shownRows(row) : NOTHING_STORED);
  }
  function submit(e: React.FormEvent) {
    e.preventDefault();
    setUnchanged(false);
    if (row && changes.length === 0 && !notesChanged) {
      setUnchanged(true);
      return;
    }
    if (row && !confirming) {
      setConfirming(true);
      return;
    }
    send();
  }
  return (
    <form
      className="card wellness-form"
      data-form="wellness"
      data-state={form.state}
      data-stored={row ? 'true' : 'false'}
      onSubmit={submit}
      aria-labelledby="wellness-form-h"
      noValidate
    >
      <h2 id="wellness-form-h">Today's wellness ({formatDate(today)})</h2>
      {row && form.state === 'conflict' ? (
        <p className="small" data-stored-note>
          Today's answers were saved ({formatDateTime(row.updated_at)}) while this form was open. Your answers are kept below; the stored ones are listed next
          to them.
        </p>
      ) : row ? (
        <p className="small" data-stored-note>
          Already submitted today ({formatDateTime(row.updated_at)}): these are the stored answers. Change any and submit to replace them.
        </p>
      ) : (
        <p className="small muted">Not submitted yet today. Choose a value for each scale.</p>
      )}
      <div className="fields">
        {SCALES.map((sc) => (
          <ScaleField
            key={sc.key}
            name={sc.key}
            label={sc.label}
            hint={sc.hint}
            value={values[sc.key]}
            issue={form.issueFor(sc.key)}
            onChange={(n) => {
              setConfirming(false);
              setValues((v) => ({ ...v, [sc.key]: n }));
            }}
          />
        ))}
        <Field label="Notes" name="notes" form={form} wide hint="Optional: anything the staff should know">
          <input
            type="text"
            maxLength={2000}
            value={notes}
            onChange={(e) => {
              setConfirming(false);
              setNotes(e.target.value);
            }}
          />
        </Field>
      </div>
      {confirming ? (
        <div className="replace-confirm" role="alert" data-replace-confirm>
          <strong>Already submitted today — replace?</strong>
          <ul className="small">
            {changes.map((c) => (
              <li key={c.label}>
                {c.label}: {c.from ?? '—'} → {c.to ?? '—'}
              </li>
            ))}
            {notesChanged ? (
              <li>
                Notes: “{row?.notes || '—'}” → “{notes || '—'}”
              </li>
            ) : null}
          </ul>
          <div className="form-actions">
            <button type="button" className="primary" data-action="replace" onClick={send}>
              Replace today's answers
            </button>
            <button
              type="button"
              onClick={() => {
                setValues(before);
                setNotes(row?.notes ?? '');
                setConfirming(false);
              }}
            >
              Keep the stored answers
            </button>
          </div>
        </div>
      ) : null}
      {unchanged ? (
        <p className="ok-note" role="status">
          Nothing changed: these answers are already stored for today.
        </p>
      ) : null}
      <FormMessages form={form} />
      {!confirming ? (
        <div className="form-actions">
          <button type="submit" className="primary" disabled={form.state === 'saving'}>
            {row ? 'Submit changes' : 'Submit'}
          </button>
        </div>
      ) : null}
    </form>
  );
}

/** One 1–5 scale as a radio group (arrow keys move between values). */
function ScaleField({
  name,
  label,
  hint,
  value,
  issue,
  onChange,
}: {
  name: string;
  label: string;
  hint: string;
  value: number | null;
  issue: string | null;
  onChange(n: number): void;
}) {
  return (
    <fieldset className={`scale-group field${issue ? ' invalid' : ''}`} data-field={name} aria-invalid={issue ? true : undefined}>
      <legend>
        {label} <span className="unit">({hint})</span>
      </legend>
      <div className="scale-options">
        {[1, 2, 3, 4, 5].map((n) => (
          <label key={n}>
            <input type="radio" name={name} value={n} checked={value === n} onChange={() => onChange(n)} />
            {n}
          </label>
        ))}
      </div>
      {issue ? (
        <span className="field-error" role="alert">
          {issue === 'Enter a number.' || issue === 'Required.' ? 'Choose a value from 1 to 5.' : issue}
        </span>
      ) : null}
    </fieldset>
  );
}

/**
 * Record a day of vitals: resting heart rate (bpm) and HRV rMSSD (ms). Vitals are a morning
 * measurement, one set a day, and are never edited (a set is recorded, or undone from Activity).
 * The same-day check is the service's (`vitals.record` refuses a second set that day with Conflict
 * `SameDayExists`, naming the stored set, unless `second_set_same_day` is sent): the form shows
 * that answer with a box to tick ("a new measurement") and sends the acknowledgement only once it
 * is ticked. A re-measurement is legitimate; a set entered twice by mistake skews the day's trend.
 */
function VitalsFormDialog({ athleteId, onClose, onSaved }: { athleteId: string; onClose(): void; onSaved(s: string): void }) {
  const [v, setV] = useState({ date: todayIso(), hr: '', hrv: '' });
  const [again, setAgain] = useState(false);
  const form = useEntryForm('vitals-add', { onSaved });
  // The service's same-day answer, kept while the user decides (a later validation error must not hide it).
  // One line per stored set (the error's issues); the message itself is written for the assistant
  // and the command line (it names the API's acknowledgement field), so the form does not show it.
  const [sameDay, setSameDay] = useState<string[] | null>(null);
  const [seenError, setSeenError] = useState(form.error);
  if (form.error !== seenError) {
    setSeenError(form.error);
    if (form.error?.kind === 'SameDayExists') setSameDay((form.error.issues ?? []).map((i) => i.message));
  }
  const num = numberInput;
  const setDate = (date: string) => {
    // Another day: the service answers again.
    setSameDay(null);
    setAgain(false);
    setV((x) => ({ ...x, date }));
  };
  const submit = () =>
    void form.submit('vitals.record', {
      athlete_id: athleteId,
      date: v.date,
      resting_hr_bpm: num(v.hr),
      hrv_rmssd_ms: num(v.hrv),
      ...(sameDay !== null && again ? { second_set_same_day: true } : {}),
    });
  return (
    <FormDialog
      form={form}
      title="Record vitals"
      submitLabel={sameDay !== null ? 'Record anyway: a new measurement' : 'Record vitals'}
      submitDisabled={sameDay !== null && !again}
      onClose={onClose}
      onSubmit={submit}
      intro={<p className="small muted">Morning values, measured lying down before getting up.</p>}
    >
      <Field label="Date" name="date" form={form}>
        <input type="date" value={v.date} max={todayIso()} onChange={(e) => setDate(e.target.value)} />
      </Field>
      <Field label="Resting heart rate" unit="bpm" name="resting_hr_bpm" form={form} hint="25–220">
        <input type="text" inputMode="numeric" value={v.hr} onChange={(e) => setV((x) => ({ ...x, hr: e.target.value }))} />
      </Field>
      <Field label="HRV (rMSSD)" unit="ms" name="hrv_rmssd_ms" form={form} hint="1–400">
        <input type="text" inputMode="decimal" value={v.hrv} onChange={(e) => setV((x) => ({ ...x, hrv: e.target.value }))} />
      </Field>
      {sameDay !== null ? (
        <SameDayWarning
          title={`Vitals are already recorded for ${formatDate(v.date)}`}
          items={sameDay}
          advice="Vitals are not edited: a set entered by mistake is undone from Activity. Record another set only for a new measurement (a reading retaken); the same values entered again count twice in the day's trend."
          confirmLabel="This is a new measurement, not the same one entered again"
          action="confirm-new-measurement"
          checked={again}
          onChange={setAgain}
        />
      ) : null}
    </FormDialog>
  );
}
