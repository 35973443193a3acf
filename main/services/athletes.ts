/** Athletes and squads. Athlete-role users see only their linked athlete. */
import { Conflict, NotFound } from '../../models/errors';
import type { Athlete, Squad } from '../../models/records';
import { countRows, listRows } from '../data/rows';
import { isSelfScoped, scopeAthleteId } from './context';
import { defined, insertRow, updateRow } from './plan';
import { notInFuture, orgSquad, visibleAthlete } from './scope';
import type { VerbContext } from './verb';
import { readVerb, writeVerb } from './verb';

export const listAthletes = readVerb('athletes.list', {
  run(vc, i) {
    const self = isSelfScoped(vc.actor) ? scopeAthleteId(vc.actor, undefined) : undefined;
    const filter = {
      eq: { squad_id: i.squad_id, status: i.status === 'all' ? undefined : i.status, id: self },
      ...(i.search ? { like: { column: 'name', text: i.search } } : {}),
    };
    return {
      total: countRows(vc.db, 'athlete', vc.actor.orgId, filter),
      athletes: listRows<Athlete>(vc.db, 'athlete', vc.actor.orgId, { ...filter, orderBy: [{ column: 'name' }], limit: i.limit, offset: i.offset }),
    };
  },
});

export const getAthlete = readVerb('athletes.get', {
  run: (vc, i) => visibleAthlete(vc, i.id),
});

export const createAthlete = writeVerb('athletes.create', {
  plan(vc, i) {
    if (i.squad_id) orgSquad(vc, i.squad_id);
    notInFuture(vc, 'date_of_birth', i.date_of_birth);
    return { planned: { verb: 'athletes.create', summary: `Add athlete ${i.name}`, changes: [insertRow('athlete', { ...i, status: 'active' })] } };
  },
});

export const updateAthlete = writeVerb('athletes.update', {
  plan(vc, i) {
    const a = visibleAthlete(vc, i.id);
    if (i.squad_id) orgSquad(vc, i.squad_id);
    if (i.date_of_birth) notInFuture(vc, 'date_of_birth', i.date_of_birth);
    const { id: _id, ...patch } = i;
    const change = updateRow('athlete', a, defined(patch));
    return { planned: { verb: 'athletes.update', summary: `Update athlete ${a.name}`, changes: change ? [change] : [] } };
  },
});

export const deactivateAthlete = writeVerb('athletes.deactivate', {
  plan(vc, i) {
    const a = visibleAthlete(vc, i.id);
    // The reason is free text a person typed: it lives in its own record-text column, never in the
    // summary (summaries are generated from structured fields only; they reach the activity log,
    // Undo and any model cleared for summaries).
    const change = updateRow('athlete', a, { status: 'deactivated', deactivation_reason: i.reason });
    return { planned: { verb: 'athletes.deactivate', summary: `Deactivate athlete ${a.name}`, changes: change ? [change] : [] } };
  },
});

export const listSquads = readVerb('squads.list', {
  run(vc) {
    const squads = listRows<Squad>(vc.db, 'squad', vc.actor.orgId, { orderBy: [{ column: 'name' }] });
    if (isSelfScoped(vc.actor)) {
      const me = visibleAthlete(vc, scopeAthleteId(vc.actor, undefined)!);
      return squads.filter((s) => s.id === me.squad_id).map((s) => ({ ...s, athlete_count: 1 }));
    }
    return squads.map((s) => ({ ...s, athlete_count: countRows(vc.db, 'athlete', vc.actor.orgId, { eq: { squad_id: s.id, status: 'active' } }) }));
  },
});

export const getSquad = readVerb('squads.get', {
  run(vc, i) {
    const s = orgSquad(vc, i.id);
    if (isSelfScoped(vc.actor) && visibleAthlete(vc, scopeAthleteId(vc.actor, undefined)!).squad_id !== s.id) throw new NotFound('Squad');
    return s;
  },
});

/** Squad names are unique in an organisation, ignoring case. @throws Conflict */
function uniqueSquadName(vc: VerbContext, name: string, self?: string): void {
  const same = listRows<Squad>(vc.db, 'squad', vc.actor.orgId, { ieq: { name }, limit: 2 }).find((s) => s.id !== self);
  if (same) throw new Conflict(`A squad named "${same.name}" already exists. Nothing was saved: choose another name (or add the season to tell them apart).`);
}

export const createSquad = writeVerb('squads.create', {
  plan(vc, i) {
    uniqueSquadName(vc, i.name);
    return { planned: { verb: 'squads.create', summary: `Create squad ${i.name}`, changes: [insertRow('squad', i)] } };
  },
});

export const updateSquad = writeVerb('squads.update', {
  plan(vc, i) {
    const s = orgSquad(vc, i.id);
    if (i.name !== undefined) uniqueSquadName(vc, i.name, s.id);
    const { id: _id, ...patch } = i;
    const change = updateRow('squad', s, defined(patch));
    return { planned: { verb: 'squads.update', summary: `Update squad ${s.name}`, changes: change ? [change] : [] } };
  },
});

export const moveAthletes = writeVerb('squads.moveAthletes', {
  plan(vc, i) {
    const target = i.squad_id ? orgSquad(vc, i.squad_id) : null;
    const ids = [...new Set(i.athlete_ids)];
    const changes = ids.flatMap((id) => {
      const change = updateRow('athlete', visibleAthlete(vc, id), { squad_id: target?.id ?? null });
      return change ? [change] : [];
    });
    const where = target ? `to ${target.name}` : 'out of their squad';
    return {
      planned: { verb: 'squads.moveAthletes', summary: `Move ${changes.length} athlete${changes.length === 1 ? '' : 's'} ${where}`, changes },
    };
  },
});
