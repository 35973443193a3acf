/**
 * The Capture page: the club's capture sessions and each one's results (`pose.read`), and for
 * `capture.run` holders the room workflow — rig set-up and calibration, recording a trial, and
 * processing it with a progress bar per stage. Sections a role cannot use are absent from its tabs
 * (and say so by URL); the services and the main process refuse them anyway.
 */
import { useCallback, useEffect, useState } from 'react';
import { hasPermission } from '../../../models/roles';
import { call } from '../bridge';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { formatDateTime, humanize } from '../format';
import { canOpen } from '../access';
import type { CaptureTab } from '../router';
import { href } from '../router';
import { useSession } from '../store';
import { TEST_LABEL } from './capture/labels';
import { ProcessView } from './capture/Process';
import { RecordView } from './capture/Record';
import { RigView } from './capture/Rig';
import { ResultsView } from './capture/Results';

const TAB_LABEL: Record<Exclude<CaptureTab, 'results'>, string> = {
  sessions: 'Sessions',
  record: 'Record',
  process: 'Process',
  rig: 'Rig & calibration',
};
const TABS = ['sessions', 'rig', 'record', 'process'] as const satisfies readonly Exclude<CaptureTab, 'results'>[];

function Sessions({ onState }: { onState: (s: 'loading' | 'ready' | 'error') => void }) {
  const data = useLoad(async () => {
    const [s, a] = await Promise.all([call('capture.listSessions', { limit: 200 }), call('athletes.list', { status: 'all', limit: 5000 })]);
    return { sessions: s.sessions, names: new Map(a.athletes.map((x) => [x.id, x.name])) };
  }, 'sessions');
  useEffect(() => onState(data.state), [data.state, onState]);
  if (data.state === 'error') return <ErrorNote error={data.error} />;
  if (data.state !== 'ready') return null;
  const { sessions, names } = data.data;
  if (sessions.length === 0) return <p className="muted">No capture sessions yet.</p>;
  return (
    <table className="table" aria-label="Capture sessions">
      <thead>
        <tr>
          <th scope="col">Recorded</th>
          <th scope="col">Athlete</th>
          <th scope="col">Test</th>
          <th scope="col">Cameras</th>
          <th scope="col">Status</th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((s) => (
          <tr key={s.id} data-capture-session={s.id}>
            <td>
              <a href={href({ page: 'capture', tab: 'results', id: s.id })}>{formatDateTime(s.recorded_at)}</a>
              <div className="muted small">{s.trial_name}</div>
            </td>
            <td>{names.get(s.athlete_id) ?? '—'}</td>
            <td>{TEST_LABEL[s.test] ?? s.test}</td>
            <td>
              {s.camera_count} · {s.fps} fps
            </td>
            <td>{humanize(s.status)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function Capture({ tab, id }: { tab: CaptureTab; id?: string }) {
  const me = useSession((s) => s.me)!;
  const key = `${tab}/${id ?? ''}`;
  const [inner, setInnerState] = useState<{ key: string; state: 'loading' | 'ready' | 'error' }>({ key: '', state: 'loading' });
  const setInner = useCallback(
    (state: 'loading' | 'ready' | 'error') => setInnerState((p) => (p.key === key && p.state === state ? p : { key, state })),
    [key],
  );
  const [title, setTitle] = useState('Capture');
  const tabs = TABS.filter((t) => canOpen(me.role, { page: 'capture', tab: t }));
  const known = (TABS as readonly string[]).includes(tab) || (tab === 'results' && Boolean(id));
  const state = !known ? 'ready' : inner.key === key ? inner.state : 'loading';
  return (
    <Page page={`capture-${tab}`} state={state} title={tab === 'results' ? title : 'Capture'}>
      <nav className="tabs" aria-label="Capture">
        {tabs.map((t) => (
          <a key={t} href={href({ page: 'capture', tab: t })} aria-current={t === tab ? 'page' : undefined} className={t === tab ? 'active' : ''}>
            {TAB_LABEL[t]}
          </a>
        ))}
      </nav>
      {!known ? (
        <div className="error-note" role="alert" data-error-code="NotFound">
          <strong>Not found</strong>
          <p>There is no capture section “{tab}”.</p>
        </div>
      ) : tab === 'results' && id ? (
        <ResultsView id={id} onState={setInner} onTitle={setTitle} />
      ) : tab === 'record' ? (
        <RecordView onState={setInner} />
      ) : tab === 'rig' ? (
        <RigView onState={setInner} />
      ) : tab === 'process' ? (
        <ProcessView onState={setInner} canRun={hasPermission(me.role, 'capture.run')} />
      ) : (
        <Sessions onState={setInner} />
      )}
    </Page>
  );
}
