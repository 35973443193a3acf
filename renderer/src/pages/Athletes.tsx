/** Athletes: every athlete of the club, searchable by name and filterable by squad; virtualised. */
import { useDeferredValue, useMemo, useState } from 'react';
import type { Athlete } from '../../../models/records';
import { hasPermission } from '../../../models/roles';
import { call } from '../bridge';
import { SavedNote } from '../components/Form';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { VirtualList } from '../components/VirtualList';
import { ageOn, todayIso } from '../format';
import { navigate } from '../router';
import { useSession } from '../store';
import { AthleteFormDialog } from './forms/AthleteForms';

const PAGE = 5000;

/** Every athlete (paged in blocks of 5,000) and the squads. */
async function loadAll(): Promise<{ athletes: Athlete[]; squads: Map<string, string>; total: number }> {
  const [first, squads] = await Promise.all([call('athletes.list', { limit: PAGE, status: 'all' }), call('squads.list', {})]);
  const athletes = [...first.athletes];
  while (athletes.length < first.total) {
    const next = await call('athletes.list', { limit: PAGE, offset: athletes.length, status: 'all' });
    if (next.athletes.length === 0) break;
    athletes.push(...next.athletes);
  }
  return { athletes, squads: new Map(squads.map((s) => [s.id, s.name])), total: first.total };
}

export function Athletes() {
  const data = useLoad(loadAll, 'athletes');
  const [search, setSearch] = useState('');
  const [squad, setSquad] = useState('');
  const [showInactive, setShowInactive] = useState(false);
  const q = useDeferredValue(search.trim().toLowerCase());
  const today = todayIso();
  const me = useSession((s) => s.me)!;
  const canWrite = hasPermission(me.role, 'athlete.write');
  const [adding, setAdding] = useState(false);
  const [saved, setSaved] = useState<string | null>(null);

  const rows = useMemo(() => {
    const all = data.data?.athletes ?? [];
    return all.filter((a) => (showInactive || a.status === 'active') && (!squad || a.squad_id === squad) && (!q || a.name.toLowerCase().includes(q)));
  }, [data.data, q, squad, showInactive]);

  const squads = data.data ? [...data.data.squads.entries()].sort((a, b) => a[1].localeCompare(b[1])) : [];
  return (
    <Page
      page="athletes"
      state={data.state}
      title="Athletes"
      actions={
        canWrite ? (
          <button
            type="button"
            className="primary"
            data-action="add-athlete"
            onClick={() => {
              setSaved(null);
              setAdding(true);
            }}
          >
            Add athlete
          </button>
        ) : null
      }
    >
      {adding ? (
        <AthleteFormDialog
          athlete={null}
          squads={squads.map(([id, name]) => ({ id, name }))}
          onClose={() => setAdding(false)}
          onSaved={(s) => {
            setAdding(false);
            setSaved(s);
          }}
        />
      ) : null}
      <SavedNote text={saved} />
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {data.state === 'ready' ? (
        <>
          <div className="filters" role="search">
            <label>
              Search by name
              <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} placeholder="e.g. Ellery" aria-controls="athlete-list" />
            </label>
            <label>
              Squad
              <select value={squad} onChange={(e) => setSquad(e.target.value)}>
                <option value="">All squads</option>
                {squads.map(([id, name]) => (
                  <option key={id} value={id}>
                    {name}
                  </option>
                ))}
              </select>
            </label>
            <label className="check">
              <input type="checkbox" checked={showInactive} onChange={(e) => setShowInactive(e.target.checked)} /> Include deactivated
            </label>
            <span className="muted" role="status" data-testid="athlete-count">
              {rows.length.toLocaleString('en-GB')} of {data.data.athletes.length.toLocaleString('en-GB')} athletes
            </span>
          </div>
          <div id="athlete-list">
            <VirtualList
              items={rows}
              rowHeight={40}
              label="Athletes"
              keyOf={(a) => a.id}
              onOpen={(a) => navigate({ page: 'athlete', id: a.id, tab: 'overview' })}
              header={
                <div className="vhead athlete-cols" aria-hidden="true">
                  <span>Name</span>
                  <span>Squad</span>
                  <span>Position</span>
                  <span>Age</span>
                  <span>Status</span>
                </div>
              }
              renderRow={(a) => (
                <div className="athlete-cols" data-athlete-name={a.name}>
                  <a href={`#/athletes/${a.id}`} tabIndex={-1}>
                    {a.name}
                  </a>
                  <span>{(a.squad_id && data.data.squads.get(a.squad_id)) || '—'}</span>
                  <span>{a.position ?? '—'}</span>
                  <span>{ageOn(a.date_of_birth, today)}</span>
                  <span className={`badge ${a.status === 'active' ? 'ok' : 'muted'}`}>{a.status}</span>
                </div>
              )}
            />
            {rows.length === 0 ? <p className="muted">No athlete matches. Clear the search or choose another squad.</p> : null}
          </div>
        </>
      ) : null}
    </Page>
  );
}
