/** Training sessions, session-RPE loads (one athlete or a whole squad) and ACWR. */
import { codeWords, formatDay } from '../../models/format';
import { computeAcwr } from '../../models/acwr';
import { NotFound, SameDayExists, ValidationError } from '../../models/errors';
import type { Athlete, SessionLoad, TrainingSession } from '../../models/records';
import { countRows, dailyLoads, getRow, listRows } from '../data/rows';
import { orgSquad, visibleAthlete, visibleRow } from './scope';
import { isSelfScoped, scopeAthleteId } from './context';
import { insertRow } from './plan';
import { activeAthlete, listScoped, notInFuture, today } from './scope';
import { latestClinicalDate } from '../../models/policy';
import { readVerb, writeVerb } from './verb';

export const listSessions = readVerb('sessions.list', {
  run(vc, i) {
    const f = { eq: { squad_id: i.squad_id }, range: { column: 'date', from: i.from, to: i.to } };
    return {
      total: countRows(vc.db, 'training_session', vc.actor.orgId, f),
      sessions: listRows<TrainingSession>(vc.db, 'training_session', vc.actor.orgId, {
        ...f,
        orderBy: [{ column: 'date', desc: true }],
        limit: i.limit,
        offset: i.offset,
      }),
    };
  },
});

export const getSession = readVerb('sessions.get', {
  run: (vc, i) => visibleRow<TrainingSession>(vc, 'training_session', i.id, 'Training session'),
});

export const createSession = writeVerb('sessions.create', {
  plan(vc, i) {
    const squad = i.squad_id ? orgSquad(vc, i.squad_id) : null;
    return {
      planned: {
        verb: 'sessions.create',
        summary: `Create ${codeWords(i.kind)} session on ${formatDay(i.date)}${squad ? ` for ${squad.name}` : ''}`,
        changes: [insertRow('training_session', i)],
      },
    };
  },
});

export const listLoads = readVerb('workload.listLoads', {
  run(vc, i) {
    const base = { range: { column: 'date', from: i.from, to: i.to }, orderBy: [{ column: 'date', desc: true }], limit: i.limit, offset: i.offset };
    if (i.squad_id && !isSelfScoped(vc.actor)) {
      orgSquad(vc, i.squad_id);
      const ids = listRows<Athlete>(vc.db, 'athlete', vc.actor.orgId, { eq: { squad_id: i.squad_id }, limit: 100_000 }).map((a) => a.id);
      const f = { ...base, in: { athlete_id: ids } };
      return { total: countRows(vc.db, 'session_load', vc.actor.orgId, f), loads: listRows<SessionLoad>(vc.db, 'session_load', vc.actor.orgId, f) };
    }
    const r = listScoped<SessionLoad>(vc, 'session_load', i.athlete_id, base);
    return { total: r.total, loads: r.rows };
  },
});

export const logSessionLoads = writeVerb('workload.logSessionLoads', {
  plan(vc, i) {
    notInFuture(vc, 'date', i.date);
    if (i.training_session_id && !getRow(vc.db, 'training_session', vc.actor.orgId, i.training_session_id)) throw new NotFound('Training session');
    let athletes: Athlete[];
    let label: string;
    if (i.squad_id) {
      const squad = orgSquad(vc, i.squad_id);
      const excluded = new Set(i.exclude_athlete_ids);
      athletes = listRows<Athlete>(vc.db, 'athlete', vc.actor.orgId, {
        eq: { squad_id: squad.id, status: 'active' },
        orderBy: [{ column: 'name' }],
        limit: 100_000,
      }).filter((a) => !excluded.has(a.id));
      label = squad.name;
    } else {
      const a = activeAthlete(vc, i.athlete_id!);
      notInFuture(vc, 'date', i.date, a);
      athletes = [a];
      label = a.name;
    }
    const load = Math.round(i.rpe * i.duration_min * 100) / 100;
    // Per-athlete minutes / RPE (a late substitute, a modified session) override the session values.
    const own = new Map(i.per_athlete.map((p) => [p.athlete_id, p]));
    const planned = new Set(athletes.map((a) => a.id));
    const stray = i.per_athlete.find((p) => !planned.has(p.athlete_id));
    if (stray)
      throw new ValidationError('per_athlete names an athlete who is not part of this load (not in the squad, inactive or excluded).', [
        { path: 'per_athlete', message: `athlete ${stray.athlete_id} is not part of this load` },
      ]);
    // A second session the same day must be meant: a load entered twice doubles that day's load and
    // inflates ACWR. The check runs on every door (form, CLI, assistant, MCP) and cannot be skipped;
    // if the read itself fails, the verb fails with it (nothing is written). One acknowledgement
    // covers every row of a squad call.
    if (!i.second_session_same_day && athletes.length > 0) {
      const stored = listRows<SessionLoad>(vc.db, 'session_load', vc.actor.orgId, {
        eq: { date: i.date },
        in: { athlete_id: athletes.map((a) => a.id) },
        orderBy: [{ column: 'created_at' }],
        limit: 100_000,
      });
      if (stored.length > 0) {
        const byAthlete = new Map<string, SessionLoad[]>();
        for (const l of stored) byAthlete.set(l.athlete_id, [...(byAthlete.get(l.athlete_id) ?? []), l]);
        const already = athletes.filter((a) => byAthlete.has(a.id));
        const line = (a: Athlete, ids: boolean) =>
          `${a.name}: ${byAthlete
            .get(a.id)!
            .map((l) => `${l.duration_min} min × RPE ${l.rpe} = ${l.load_au} AU${ids ? ` (load ${l.id})` : ''}`)
            .join('; ')}`;
        const lines = already.map((a) => line(a, false));
        const who = already.length === 1 ? '1 athlete already has' : `${already.length} athletes already have`;
        throw new SameDayExists(
          `${who} a load on ${formatDay(i.date)}: ${already.map((a) => line(a, true)).join('; ')}. Nothing was written. If this is another session that day, send it again with second_session_same_day: true (it covers every athlete of the call); a load entered by mistake is undone from Activity.`,
          'second_session_same_day',
          lines,
        );
      }
    }
    const changes = athletes.map((a) => {
      const minutes = own.get(a.id)?.duration_min ?? i.duration_min;
      const rpe = own.get(a.id)?.rpe ?? i.rpe;
      return insertRow('session_load', {
        athlete_id: a.id,
        training_session_id: i.training_session_id ?? null,
        date: i.date,
        duration_min: minutes,
        rpe,
        load_au: Math.round(rpe * minutes * 100) / 100,
      });
    });
    const varied = own.size > 0 ? `; ${own.size} with their own minutes/RPE` : '';
    return {
      planned: {
        verb: 'workload.logSessionLoads',
        summary: `Log ${changes.length} session load${changes.length === 1 ? '' : 's'} for ${label} on ${formatDay(i.date)} (RPE ${i.rpe} × ${i.duration_min} min = ${load} AU${varied})`,
        changes,
      },
    };
  },
});

export const getAcwr = readVerb('workload.acwr', {
  run(vc, i) {
    const id = scopeAthleteId(vc.actor, i.athlete_id)!;
    const a = visibleAthlete(vc, id);
    const asOf = i.as_of ?? today(vc);
    if (asOf > latestClinicalDate(today(vc)))
      throw new ValidationError(`as_of is in the future (${asOf}); ACWR is computed from loads that happened.`, [
        { path: 'as_of', message: 'date is in the future' },
      ]);
    const loads = dailyLoads(vc.db, vc.actor.orgId, a.id, asOf);
    const methods = i.method === 'both' ? (['rolling', 'ewma'] as const) : ([i.method] as const);
    return { athlete_id: a.id, athlete_name: a.name, as_of: asOf, results: methods.map((m) => computeAcwr(loads, asOf, m)) };
  },
});
