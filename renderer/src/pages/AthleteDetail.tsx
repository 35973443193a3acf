/**
 * One athlete: profile, and tabs for injuries with RTP sign-offs, screenings, wellness and vitals,
 * workload with ACWR, and pose metrics with their conditions. Tabs the role cannot use are absent
 * (and say so by URL); the services refuse their data anyway.
 */
import { useCallback, useState } from 'react';
import type { Athlete, Squad } from '../../../models/records';
import { hasPermission } from '../../../models/roles';
import { CallError, call } from '../bridge';
import { SavedNote } from '../components/Form';
import { canOpenTab } from '../access';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { ageOn, formatDate, humanize, todayIso } from '../format';
import type { AthleteTab } from '../router';
import { ATHLETE_TABS, href } from '../router';
import { useSession } from '../store';
import { InjuriesTab } from './athlete/Injuries';
import { PoseTab } from './athlete/Pose';
import { ScreeningsTab } from './athlete/Screenings';
import { WellnessTab } from './athlete/Wellness';
import { WorkloadTab } from './athlete/Workload';
import { AthleteFormDialog, DeactivateAthleteDialog } from './forms/AthleteForms';

const TAB_LABEL: Record<AthleteTab, string> = {
  overview: 'Overview',
  injuries: 'Injuries & RTP',
  screenings: 'Screenings',
  wellness: 'Wellness & vitals',
  workload: 'Workload & ACWR',
  pose: 'Pose metrics',
};

export function AthleteDetail({ id, tab }: { id: string; tab: AthleteTab }) {
  const me = useSession((s) => s.me)!;
  const athlete = useLoad(async () => {
    const [a, squads] = await Promise.all([call('athletes.get', { id }), call('squads.list', {}).catch(() => [])]);
    return { a, squad: squads.find((s) => s.id === a.squad_id)?.name ?? null, squads };
  }, id);
  const tabs = ATHLETE_TABS.filter((t) => canOpenTab(me.role, t));
  const allowed = (tabs as readonly string[]).includes(tab);
  // The inner state belongs to the tab that reported it: after a tab switch the page reads
  // 'loading' until the new tab reports, so nobody sees the previous tab's 'ready'.
  const [innerState, setInnerState] = useState<{ key: string; state: 'loading' | 'ready' | 'error' }>({ key: '', state: 'loading' });
  const tabKey = `${id}/${tab}`;
  const setInner = useCallback((state: 'loading' | 'ready' | 'error') => setInnerState({ key: tabKey, state }), [tabKey]);
  const inner = innerState.key === tabKey ? innerState.state : 'loading';
  // Outlives the reload that follows a save (the tab content remounts).
  const [saved, setSaved] = useState<string | null>(null);
  const pageState = athlete.state !== 'ready' ? athlete.state : !allowed ? 'ready' : tab === 'overview' ? 'ready' : inner;

  return (
    <Page page={`athlete-${tab}`} state={pageState} title={athlete.data ? athlete.data.a.name : 'Athlete'}>
      {athlete.state === 'error' ? <ErrorNote error={athlete.error} /> : null}
      <SavedNote text={saved} />
      {athlete.state === 'ready' ? (
        <>
          <nav className="tabs" aria-label="Athlete record">
            {tabs.map((t) => (
              <a key={t} href={href({ page: 'athlete', id, tab: t })} aria-current={t === tab ? 'page' : undefined} className={t === tab ? 'active' : ''}>
                {TAB_LABEL[t]}
              </a>
            ))}
          </nav>
          {!allowed ? (
            <div className="error-note" role="alert" data-error-code="Forbidden">
              <strong>Not available for your role</strong>
              <p>
                {TAB_LABEL[tab as AthleteTab] ?? 'This section'} is not part of what your role ({me.role}) can see.
              </p>
            </div>
          ) : tab === 'overview' ? (
            <Overview a={athlete.data.a} squad={athlete.data.squad} squads={athlete.data.squads} setSaved={setSaved} />
          ) : tab === 'injuries' ? (
            <InjuriesTab athleteId={id} onState={setInner} onSaved={setSaved} />
          ) : tab === 'screenings' ? (
            <ScreeningsTab athleteId={id} onState={setInner} onSaved={setSaved} />
          ) : tab === 'wellness' ? (
            <WellnessTab athleteId={id} onState={setInner} onSaved={setSaved} />
          ) : tab === 'workload' ? (
            <WorkloadTab athleteId={id} athleteName={athlete.data.a.name} onState={setInner} onSaved={setSaved} />
          ) : (
            <PoseTab athleteId={id} onState={setInner} />
          )}
        </>
      ) : null}
    </Page>
  );
}

function Overview({ a, squad, squads, setSaved }: { a: Athlete; squad: string | null; squads: readonly Squad[]; setSaved(s: string | null): void }) {
  const me = useSession((s) => s.me)!;
  const canWrite = hasPermission(me.role, 'athlete.write');
  const [open, setOpen] = useState<'edit' | 'deactivate' | null>(null);
  const done = (s: string) => {
    setOpen(null);
    setSaved(s);
  };
  return (
    <section className="card" aria-labelledby="profile-h">
      <header className="card-head">
        <h2 id="profile-h">Profile</h2>
        {canWrite ? (
          <div className="row-actions">
            <button
              type="button"
              data-action="edit-athlete"
              onClick={() => {
                setSaved(null);
                setOpen('edit');
              }}
            >
              Edit athlete
            </button>
            {a.status === 'active' ? (
              <button
                type="button"
                data-action="deactivate-athlete"
                onClick={() => {
                  setSaved(null);
                  setOpen('deactivate');
                }}
              >
                Deactivate…
              </button>
            ) : null}
          </div>
        ) : null}
      </header>
      {open === 'edit' ? <AthleteFormDialog athlete={a} squads={squads} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open === 'deactivate' ? <DeactivateAthleteDialog athlete={a} onClose={() => setOpen(null)} onSaved={done} /> : null}
      <dl className="facts">
        <dt>Date of birth</dt>
        <dd>
          {formatDate(a.date_of_birth)} (age {ageOn(a.date_of_birth, todayIso())})
        </dd>
        <dt>Sex</dt>
        <dd>{humanize(a.sex)}</dd>
        <dt>Squad</dt>
        <dd>{squad ?? '—'}</dd>
        <dt>Position</dt>
        <dd>{a.position ?? '—'}</dd>
        <dt>Dominant side</dt>
        <dd>{humanize(a.dominant_side)}</dd>
        <dt>Status</dt>
        <dd>
          <span className={`badge ${a.status === 'active' ? 'ok' : 'muted'}`}>{a.status}</span>
        </dd>
        {a.status === 'deactivated' && a.deactivation_reason ? (
          <>
            <dt>Deactivation reason</dt>
            <dd className="record-text">{a.deactivation_reason}</dd>
          </>
        ) : null}
      </dl>
      <h3>Notes (as recorded)</h3>
      {a.notes ? <blockquote className="record-text">{a.notes}</blockquote> : <p className="muted">No notes.</p>}
    </section>
  );
}

/** Map a load failure to the tab's state and a message. */
export function errorOf(e: unknown) {
  return e instanceof CallError ? e.payload : { code: 'Internal' as const, message: 'Failed to load.' };
}
