/**
 * Squads with their active athlete counts. Add squad, Rename and Move athletes for the roles that
 * hold athlete.write; Log session load for a squad and Add training session for the roles that
 * hold workload.write. A role without the verb is not offered its button.
 */
import { useState } from 'react';
import type { Athlete, Squad } from '../../../models/records';
import { hasPermission } from '../../../models/roles';
import { call } from '../bridge';
import { SavedNote } from '../components/Form';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { useSession } from '../store';
import { LoadFormDialog, SessionFormDialog } from './forms/LoadForms';
import { MoveAthletesDialog, SquadFormDialog } from './forms/SquadForms';

type Open =
  | { kind: 'load'; squad: { id: string; name: string }; members: Pick<Athlete, 'id' | 'name'>[] }
  | { kind: 'session' }
  | { kind: 'squad'; squad: Pick<Squad, 'id' | 'name' | 'season' | 'version' | 'updated_at'> | null }
  | { kind: 'move'; from: string | null; athletes: Pick<Athlete, 'id' | 'name' | 'squad_id' | 'version' | 'updated_at'>[] }
  | null;

export function Squads() {
  const me = useSession((s) => s.me)!;
  const canLog = hasPermission(me.role, 'workload.write');
  const canEdit = hasPermission(me.role, 'athlete.write');
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
  async function moveFrom(from: string | null) {
    setSaved(null);
    const r = await call('athletes.list', { status: 'active', limit: 5000 });
    setOpen({
      kind: 'move',
      from,
      athletes: r.athletes.map((a) => ({ id: a.id, name: a.name, squad_id: a.squad_id, version: a.version, updated_at: a.updated_at })),
    });
  }
  const squads = (data.data ?? []).map((s) => ({ id: s.id, name: s.name }));
  const withRowActions = canLog || canEdit;
  return (
    <Page
      page="squads"
      state={data.state}
      title="Squads"
      actions={
        canLog || canEdit ? (
          <>
            {canEdit ? (
              <>
                <button
                  type="button"
                  className="primary"
                  data-action="add-squad"
                  onClick={() => {
                    setSaved(null);
                    setOpen({ kind: 'squad', squad: null });
                  }}
                >
                  Add squad
                </button>
                <button type="button" data-action="move-athletes" onClick={() => void moveFrom(squads[0]?.id ?? null)}>
                  Move athletes…
                </button>
              </>
            ) : null}
            {canLog ? (
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
            ) : null}
          </>
        ) : null
      }
    >
      {open?.kind === 'squad' ? <SquadFormDialog squad={open.squad} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'move' ? (
        <MoveAthletesDialog from={open.from} squads={squads} athletes={open.athletes} onClose={() => setOpen(null)} onSaved={done} />
      ) : null}
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
                {withRowActions ? (
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
                  {withRowActions ? (
                    <td className="row-actions">
                      {canEdit ? (
                        <>
                          <button
                            type="button"
                            className="link"
                            data-action="rename-squad"
                            onClick={() => {
                              setSaved(null);
                              setOpen({ kind: 'squad', squad: s });
                            }}
                          >
                            Rename…
                          </button>
                          <button type="button" className="link" data-action="move-from" onClick={() => void moveFrom(s.id)}>
                            Move athletes…
                          </button>
                        </>
                      ) : null}
                      {canLog ? (
                        <button type="button" className="link" data-action="log-load" onClick={() => void logFor(s)}>
                          Log session load…
                        </button>
                      ) : null}
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
