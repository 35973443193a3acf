/**
 * Settings → Reports (report.generate: owner, doctor, physio, sports scientist, analyst): the
 * generated reports this role may read, newest first (`reports.list`), Generate report
 * (`reports.generate` through `forms.submit`, like every other form; the new report is listed and
 * opened at once, no reload) and Open (`reports.get`: the stored Markdown in a dialog).
 *
 * Only the report kinds the role may read are offered: an athlete summary or RTP status needs
 * injury.read and rtp.read, a squad workload report workload.read (the same rule the service
 * applies, main/services/admin.ts `mayReadReport`).
 */
import { useEffect, useRef, useState } from 'react';
import type { Report } from '../../../../models/records';
import type { Role } from '../../../../models/roles';
import { hasPermission } from '../../../../models/roles';
import { call } from '../../bridge';
import { Field, FormDialog, SavedNote, useEntryForm } from '../../components/Form';
import { Markdown } from '../../components/Markdown';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { formatDateTime } from '../../format';
import { useSession } from '../../store';
import { RecordTable } from './RecordTable';

type Kind = Report['kind'];

/** Report kinds in words. */
export const REPORT_KINDS: Readonly<Record<Kind, string>> = {
  athlete_summary: 'Athlete summary',
  rtp_status: 'RTP status',
  squad_workload: 'Squad workload (ACWR)',
};

/** The kinds `role` may generate and read (mirrors the service's rule). */
export function reportKindsFor(role: Role): Kind[] {
  const clinical = hasPermission(role, 'injury.read') && hasPermission(role, 'rtp.read');
  return (Object.keys(REPORT_KINDS) as Kind[]).filter((k) => (k === 'squad_workload' ? hasPermission(role, 'workload.read') : clinical));
}

/** The Reports card of Settings. */
export function ReportsSection() {
  const me = useSession((s) => s.me)!;
  const kinds = reportKindsFor(me.role);
  const data = useLoad(() => call('reports.list', { limit: 200 }), 'settings-reports');
  const [generating, setGenerating] = useState(false);
  const [openId, setOpenId] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <section className="card" aria-labelledby="reports-settings" data-section="reports">
      <div className="card-head">
        <h2 id="reports-settings">Reports</h2>
        {kinds.length > 0 ? (
          <button
            type="button"
            className="primary"
            data-action="generate-report"
            onClick={() => {
              setSaved(null);
              setGenerating(true);
            }}
          >
            Generate report
          </button>
        ) : null}
      </div>
      <p className="small muted">
        A report is built from the records stored on the day it describes and saved as it was; generate a new one for newer figures. You can generate{' '}
        {kinds.map((k) => REPORT_KINDS[k].toLowerCase()).join(', ')} reports.
      </p>
      <SavedNote text={saved} />
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {generating ? (
        <GenerateDialog
          kinds={kinds}
          onClose={() => setGenerating(false)}
          onSaved={(summary, id) => {
            setGenerating(false);
            setSaved(summary);
            if (id) setOpenId(id);
          }}
        />
      ) : null}
      {openId ? <ReportDialog id={openId} onClose={() => setOpenId(null)} /> : null}
      {data.state === 'ready' ? (
        data.data.reports.length === 0 ? (
          <p className="muted">No reports generated yet.</p>
        ) : (
          <RecordTable
            caption="Reports"
            rows={data.data.reports}
            rowKey={(r) => r.id}
            rowAttr="report"
            rowId={(r) => r.title}
            name={{ label: 'Report', cell: (r) => r.title }}
            columns={[
              { label: 'Kind', cell: (r) => REPORT_KINDS[r.kind] },
              { label: 'Generated', cell: (r) => formatDateTime(r.created_at) },
            ]}
            actions={(r) => [{ id: 'open-report', label: 'Open', ariaLabel: `Open ${r.title}`, onClick: () => setOpenId(r.id) }]}
          />
        )
      ) : null}
    </section>
  );
}

type Option = { id: string; name: string };

/** Generate report: the kind, the athlete or squad it is about, and the day it describes. */
function GenerateDialog({ kinds, onClose, onSaved }: { kinds: readonly Kind[]; onClose(): void; onSaved(summary: string, id: string | null): void }) {
  const [kind, setKind] = useState<Kind>(kinds[0]!);
  const [athleteId, setAthleteId] = useState('');
  const [squadId, setSquadId] = useState('');
  const [asOf, setAsOf] = useState('');
  const form = useEntryForm('report-generate');
  const options = useLoad(async () => {
    const [a, s] = await Promise.all([call('athletes.list', { status: 'active', limit: 5000 }), call('squads.list', {})]);
    return { athletes: a.athletes.map((x): Option => ({ id: x.id, name: x.name })), squads: s.map((x): Option => ({ id: x.id, name: x.name })) };
  }, 'report-generate-options');
  const athletes = options.state === 'ready' ? options.data.athletes : [];
  const squads = options.state === 'ready' ? options.data.squads : [];
  const forSquad = kind === 'squad_workload';
  async function submit() {
    const input: Record<string, unknown> = { kind };
    if (forSquad) {
      if (squadId) input.squad_id = squadId;
    } else if (athleteId) input.athlete_id = athleteId;
    if (asOf) input.as_of = asOf;
    const r = await form.submit('reports.generate', input);
    if (r?.status === 'applied') onSaved(r.changeset.summary, r.changeset.changes.find((c) => c.table === 'report')?.id ?? null);
  }
  return (
    <FormDialog form={form} title="Generate report" submitLabel="Generate report" onSubmit={() => void submit()} onClose={onClose}>
      {options.state === 'error' ? <ErrorNote error={options.error} /> : null}
      <Field label="Report" name="kind" form={form}>
        <select value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
          {kinds.map((k) => (
            <option key={k} value={k}>
              {REPORT_KINDS[k]}
            </option>
          ))}
        </select>
      </Field>
      {forSquad ? (
        <Field label="Squad" name="squad_id" form={form}>
          <select value={squadId} onChange={(e) => setSquadId(e.target.value)}>
            <option value="">Choose the squad…</option>
            {squads.map((s) => (
              <option key={s.id} value={s.id}>
                {s.name}
              </option>
            ))}
          </select>
        </Field>
      ) : (
        <Field label="Athlete" name="athlete_id" form={form}>
          <select value={athleteId} onChange={(e) => setAthleteId(e.target.value)}>
            <option value="">Choose the athlete…</option>
            {athletes.map((a) => (
              <option key={a.id} value={a.id}>
                {a.name}
              </option>
            ))}
          </select>
        </Field>
      )}
      <Field label="As of" unit="date" name="as_of" form={form} hint="The day the report describes; empty for today">
        <input type="date" value={asOf} onChange={(e) => setAsOf(e.target.value)} />
      </Field>
    </FormDialog>
  );
}

/** One stored report, its Markdown as saved, in a wide dialog (Escape or Close). */
function ReportDialog({ id, onClose }: { id: string; onClose(): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const report = useLoad(() => call('reports.get', { id }), `report-${id}`);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return (
    <dialog
      ref={ref}
      className="form-dialog wide"
      aria-labelledby="report-title"
      data-report-open={report.state === 'ready' ? report.data.id : undefined}
      data-state={report.state}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <h2 id="report-title">{report.state === 'ready' ? report.data.title : 'Report'}</h2>
      {report.state === 'error' ? <ErrorNote error={report.error} /> : null}
      {report.state === 'ready' ? (
        <>
          <p className="small muted">Generated {formatDateTime(report.data.created_at)}, from the records stored then.</p>
          <div className="report-body">
            <Markdown body={report.data.markdown} athleteId={report.data.athlete_id} skipTitle />
          </div>
        </>
      ) : null}
      <div className="form-actions">
        <button type="button" className="primary" data-action="close-report" onClick={onClose} autoFocus>
          Close
        </button>
      </div>
    </dialog>
  );
}
