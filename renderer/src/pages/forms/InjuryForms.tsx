/**
 * Injury and RTP entry forms: Add injury, Update injury (status, dates, severity, notes), Add RTP
 * stage / Advance to the next stage, Edit criteria and notes of a stage, and the sign-off /
 * withdraw action (reviewed as a diff with one confirmation that says what will change; a coach
 * signing a stage the doctor has not cleared is told so by the service). All go through the one
 * form path (components/Form.tsx).
 */
import type { ReactNode } from 'react';
import { useState } from 'react';
import type { Injury, RtpEntry } from '../../../../models/records';
import { call } from '../../bridge';
import { Field, FormDialog, FormMessages, rebaseValues, shownRows, useEntryForm } from '../../components/Form';
import { ReviewDialog } from '../../components/ChangeReview';
import { formatDate, humanize, todayIso } from '../../format';

/** RTP stages in order (models/records RtpStage). */
export const RTP_STAGES = ['protection', 'rehabilitation', 'return_to_running', 'return_to_training', 'return_to_play', 'return_to_performance'] as const;
export type RtpStageName = (typeof RTP_STAGES)[number];

/** The stage after `stage` (null after the last). */
export function nextStage(stage: string | undefined): RtpStageName | null {
  if (!stage) return 'protection';
  const i = RTP_STAGES.indexOf(stage as RtpStageName);
  return i >= 0 && i < RTP_STAGES.length - 1 ? RTP_STAGES[i + 1]! : null;
}

const SEVERITIES = ['slight', 'minimal', 'mild', 'moderate', 'severe'] as const;
const MECHANISMS = ['contact', 'non_contact', 'overuse', 'unknown'] as const;
const SIDES = ['left', 'right', 'bilateral', 'none'] as const;
const BODY_PARTS = ['hamstring', 'quadriceps', 'adductor', 'calf', 'ankle', 'knee', 'hip', 'groin', 'lower back', 'shoulder', 'foot', 'concussion'];

interface InjuryValues {
  body_part: string;
  side: string;
  mechanism: string;
  onset_date: string;
  severity: string;
  status: string;
  clinician_notes: string;
}

function injuryValues(i: Injury | null): InjuryValues {
  return {
    body_part: i?.body_part ?? '',
    side: i?.side ?? '',
    mechanism: i?.mechanism ?? 'unknown',
    onset_date: i?.onset_date ?? todayIso(),
    severity: i?.severity ?? '',
    status: i?.status ?? 'open',
    clinician_notes: i?.clinician_notes ?? '',
  };
}

/** Record a new injury (no `injury`) or update one, with the version the form was opened with. */
export function InjuryFormDialog({
  athleteId,
  injury,
  initial,
  intro,
  onClose,
  onSaved,
}: {
  athleteId: string;
  injury: Injury | null;
  /** Values to start from instead of the row's (re-planning a rejected sync change on the current row). */
  initial?: Partial<Injury> | undefined;
  /** A note above the fields (why the form is open, e.g. re-planning a refused sync change). */
  intro?: ReactNode;
  onClose(): void;
  onSaved(s: string): void;
}) {
  const [opened, setOpened] = useState<Injury | null>(injury);
  const [current, setCurrent] = useState<Injury | null>(null);
  const [v, setV] = useState<InjuryValues>(() => injuryValues(initial ? ({ ...injury, ...initial } as Injury) : injury));
  const form = useEntryForm(injury ? 'injury-edit' : 'injury-add', {
    onSaved,
    onConflict: () => {
      if (injury)
        void call('injuries.get', { id: injury.id }).then((x) => {
          // Untouched fields show (and keep) what is stored now; the user's own edits stay.
          setV((cur) => rebaseValues(cur, injuryValues(opened), injuryValues(x)));
          setCurrent(x);
          setOpened(x);
        });
    },
  });
  const set = (k: keyof InjuryValues, value: string) => setV((x) => ({ ...x, [k]: value }));
  const now = (k: keyof InjuryValues, show: (x: string) => string = humanize): string | null => {
    if (!current || !injury) return null;
    const c = injuryValues(current)[k];
    return c !== injuryValues(injury)[k] ? (c ? show(c) : '—') : null;
  };
  function submit() {
    const input: Record<string, unknown> = {
      body_part: v.body_part.trim(),
      onset_date: v.onset_date,
      clinician_notes: v.clinician_notes,
      mechanism: v.mechanism,
    };
    if (v.side) input.side = v.side;
    if (v.severity) input.severity = v.severity;
    if (!injury || !opened) {
      void form.submit('injuries.create', { athlete_id: athleteId, ...input });
      return;
    }
    input.status = v.status;
    const base = injuryValues(opened) as unknown as Record<string, unknown>;
    const patch = Object.fromEntries(Object.entries(input).filter(([k, x]) => x !== base[k]));
    void form.submit('injuries.update', { id: injury.id, ...patch }, shownRows(opened));
  }
  return (
    <FormDialog
      form={form}
      title={injury ? 'Update injury' : 'Record injury'}
      intro={intro}
      submitLabel={injury ? 'Save injury' : 'Record injury'}
      onSubmit={submit}
      onClose={onClose}
    >
      <Field label="Body part" name="body_part" form={form} hint="e.g. hamstring" current={now('body_part', (x) => x)}>
        <input type="text" list="body-parts" value={v.body_part} onChange={(e) => set('body_part', e.target.value)} maxLength={80} autoComplete="off" />
      </Field>
      <datalist id="body-parts">
        {BODY_PARTS.map((b) => (
          <option key={b} value={b} />
        ))}
      </datalist>
      <Field label="Side" name="side" form={form} current={now('side')}>
        <select value={v.side} onChange={(e) => set('side', e.target.value)}>
          <option value="">Choose…</option>
          {SIDES.map((s) => (
            <option key={s} value={s}>
              {s === 'none' ? 'Not sided (e.g. concussion)' : humanize(s)}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Onset date" name="onset_date" form={form} current={now('onset_date', formatDate)}>
        <input type="date" value={v.onset_date} max={todayIso()} onChange={(e) => set('onset_date', e.target.value)} />
      </Field>
      <Field label="Severity" name="severity" form={form} hint="OSIICS time-loss bands: slight (0 days) … severe (> 28 days)" current={now('severity')}>
        <select value={v.severity} onChange={(e) => set('severity', e.target.value)}>
          <option value="">Choose…</option>
          {SEVERITIES.map((s) => (
            <option key={s} value={s}>
              {humanize(s)}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Mechanism" name="mechanism" form={form} current={now('mechanism')}>
        <select value={v.mechanism} onChange={(e) => set('mechanism', e.target.value)}>
          {MECHANISMS.map((s) => (
            <option key={s} value={s}>
              {humanize(s)}
            </option>
          ))}
        </select>
      </Field>
      {injury ? (
        <Field
          label="Status"
          name="status"
          form={form}
          hint="Close the injury when the athlete is back to full training and match play"
          current={now('status')}
        >
          <select value={v.status} onChange={(e) => set('status', e.target.value)}>
            <option value="open">Open</option>
            <option value="closed">Closed</option>
          </select>
        </Field>
      ) : null}
      <Field label="Clinician notes" name="clinician_notes" form={form} wide current={now('clinician_notes', (x) => x)}>
        <textarea value={v.clinician_notes} onChange={(e) => set('clinician_notes', e.target.value)} maxLength={10_000} />
      </Field>
    </FormDialog>
  );
}

/**
 * Add an RTP stage to an injury (`stage` preset to the next stage: "Advance"), or edit the
 * criteria and notes of an entry. A signed entry's stage and criteria are locked by the rules;
 * the form says so rather than failing.
 */
export function RtpFormDialog({
  injury,
  entry,
  stage,
  advance,
  onClose,
  onSaved,
}: {
  injury: Injury;
  entry: RtpEntry | null;
  stage?: RtpStageName | null;
  advance?: boolean;
  onClose(): void;
  onSaved(s: string): void;
}) {
  const signed = entry ? Boolean(entry.physio_signoff_by || entry.doctor_signoff_by || entry.coach_signoff_by) : false;
  const [v, setV] = useState({ stage: entry?.stage ?? stage ?? 'protection', criteria_met: entry?.criteria_met ?? '', notes: entry?.notes ?? '' });
  const [opened, setOpened] = useState<RtpEntry | null>(entry);
  const [current, setCurrent] = useState<RtpEntry | null>(null);
  const form = useEntryForm(entry ? 'rtp-edit' : 'rtp-add', {
    onSaved,
    onConflict: () => {
      if (entry)
        void call('rtp.get', { id: entry.id }).then((x) => {
          const pick = (r: RtpEntry | null) => ({ stage: r?.stage ?? 'protection', criteria_met: r?.criteria_met ?? '', notes: r?.notes ?? '' });
          setV((cur) => rebaseValues(cur, pick(opened), pick(x)));
          setCurrent(x);
          setOpened(x);
        });
    },
  });
  function submit() {
    if (!entry || !opened) {
      void form.submit('rtp.create', { injury_id: injury.id, stage: v.stage, criteria_met: v.criteria_met, notes: v.notes });
      return;
    }
    const patch: Record<string, unknown> = {};
    if (v.criteria_met !== opened.criteria_met) patch.criteria_met = v.criteria_met;
    if (v.notes !== opened.notes) patch.notes = v.notes;
    if (v.stage !== opened.stage) patch.stage = v.stage;
    void form.submit('rtp.update', { id: entry.id, ...patch }, shownRows(opened));
  }
  const title = entry ? `RTP stage: ${humanize(entry.stage)}` : advance && stage ? `Advance to ${humanize(stage).toLowerCase()}` : 'Add RTP stage';
  return (
    <FormDialog
      form={form}
      title={title}
      submitLabel={entry ? 'Save stage' : 'Add stage'}
      onSubmit={submit}
      onClose={onClose}
      intro={
        <p className="small muted">
          {humanize(injury.side === 'none' ? '' : injury.side)} {injury.body_part} injury, onset {formatDate(injury.onset_date)}.
          {signed
            ? ' This stage is signed off: its stage and criteria are locked (add a new stage, or have the sign-offs withdrawn first); notes can still be added.'
            : ''}
        </p>
      }
    >
      <Field label="Stage" name="stage" form={form} current={current && entry && current.stage !== entry.stage ? humanize(current.stage) : null}>
        <select value={v.stage} disabled={signed} onChange={(e) => setV((x) => ({ ...x, stage: e.target.value as RtpStageName }))}>
          {RTP_STAGES.map((s) => (
            <option key={s} value={s}>
              {humanize(s)}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Criteria met"
        name="criteria_met"
        form={form}
        wide
        hint="e.g. full ROM, pain-free isometrics, 90% hop symmetry"
        current={current && entry && current.criteria_met !== entry.criteria_met ? current.criteria_met || '—' : null}
      >
        <textarea value={v.criteria_met} disabled={signed} onChange={(e) => setV((x) => ({ ...x, criteria_met: e.target.value }))} maxLength={2000} />
      </Field>
      <Field label="Notes" name="notes" form={form} wide current={current && entry && current.notes !== entry.notes ? current.notes || '—' : null}>
        <textarea value={v.notes} onChange={(e) => setV((x) => ({ ...x, notes: e.target.value }))} maxLength={5000} />
      </Field>
    </FormDialog>
  );
}

type SignoffVerb = 'rtp.signoffPhysio' | 'rtp.signoffDoctor' | 'rtp.signoffCoach';

/**
 * Sign (or withdraw) one sign-off on an RTP entry in the user's own name: reviewed first (what
 * will change, and what it means), applied on one confirmation.
 */
export function SignoffAction({
  entry,
  who,
  label,
  verb,
  signed,
  onSaved,
}: {
  entry: RtpEntry;
  who: string;
  label: string;
  verb: SignoffVerb;
  signed: boolean;
  onSaved(s: string): void;
}) {
  const form = useEntryForm('rtp-signoff', { onSaved });
  return (
    <form
      className="inline-form"
      data-form="rtp-signoff"
      data-state={form.state}
      data-entry={entry.id}
      data-who={who}
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void form.submit(verb, { id: entry.id, signed: !signed }, shownRows(entry));
      }}
    >
      <button type="submit" className="link" disabled={form.state === 'saving'}>
        {signed ? 'Withdraw…' : `Sign as ${label.toLowerCase()}…`}
      </button>
      <FormMessages form={form} />
      {form.review ? <ReviewDialog form={form} /> : null}
    </form>
  );
}
