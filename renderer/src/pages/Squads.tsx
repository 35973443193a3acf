/** Squads with their active athlete counts; Log session load for a squad and Add training session for the roles that hold workload.write. */
import { useState } from 'react';
import type { Athlete } from '../../../models/records';
import { hasPermission } from '../../../models/roles';
import { call } from '../bridge';
import { SavedNote } from '../components/Form';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { useSession } from '../store';
import { LoadFormDialog, SessionFormDialog } from './forms/LoadForms';

type Open = { kind: 'load'; squad: { id: string; name: string }; members: Pick<Athlete, 'id' | 'name'>[] } | { kind: 'session' } | null;

export function Squads() {
  const me = useSession((s) => s.me)!;
  const canLog = hasPermission(me.role, 'workload.write');
  const data = useLoad(() => call('squads.list', {}), 'squads');
  const [open, setOpen] = useState<Open>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const done = (s: string) => {
    setOpen(null);
    setSaved(s);
  };
  async function logFor(squad: { id: string; name: string }) {
    setSaved(null);
    const r = await call('athletes.list', { squad_id: squad.id, status: 'active', limit: 500 });
    setOpen({ kind: 'load', squad, members: r.athletes.map((a) => ({ id: a.id, name: a.name })) });
  }
  const squads = (data.data ?? []).map((s) => ({ id: s.id, name: s.name }));
  return (
    <Page
      page="squads"
      state={data.state}
      title="Squads"
      actions={
        canLog ? (
          <button
            type="button"
            data-action="add-session"
            onClick={() => {
              setSaved(null);
              setOpen({ kind: 'session' });
            }}
          >
            Add training session
          </button>
        ) : null
      }
    >
      {open?.kind === 'load' ? <LoadFormDialog squad={open.squad} athlete={null} members={open.members} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'session' ? <SessionFormDialog squads={squads} onClose={() => setOpen(null)} onSaved={done} /> : null}
      <SavedNote text={saved} />
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {data.state === 'ready' ? (
        data.data.length === 0 ? (
          <p className="muted">No squads yet.</p>
        ) : (
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Squad</th>
                <th scope="col">Season</th>
                <th scope="col" className="num">
                  Active athletes
                </th>
                {canLog ? (
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                ) : null}
              </tr>
            </thead>
            <tbody>
              {data.data.map((s) => (
                <tr key={s.id} data-squad={s.name}>
                  <th scope="row">{s.name}</th>
                  <td>{s.season}</td>
                  <td className="num">{s.athlete_count}</td>
                  {canLog ? (
                    <td>
                      <button type="button" className="link" data-action="log-load" onClick={() => void logFor(s)}>
                        Log session load…
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        )
      ) : null}
    </Page>
  );
}
