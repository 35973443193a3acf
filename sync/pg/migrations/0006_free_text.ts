/**
 * HQ 0006: the athlete's deactivation reason is its own column, as the device's migration 0013
 * makes it (`deactivation_reason` text, '' when none), and no longer part of a changeset summary:
 * for a still deactivated athlete the reason of their latest applied deactivation whose summary
 * reads exactly "Deactivate athlete <current name> (<reason>)" moves into the column, then every
 * deactivation summary (hq_changeset and activity, and "Undo: …" of one) is rewritten from
 * structured fields only. The owner lifts FORCE row-level security on athlete, activity and hq_changeset for the
 * back-fill (it runs across every org, as HQ 0003 does) and restores it in the same transaction.
 * Forward-only: never edit once shipped.
 */
export const sql = `
ALTER TABLE athlete ADD COLUMN deactivation_reason text NOT NULL DEFAULT '';
ALTER TABLE athlete NO FORCE ROW LEVEL SECURITY;
ALTER TABLE athlete DISABLE ROW LEVEL SECURITY;
ALTER TABLE activity NO FORCE ROW LEVEL SECURITY;
ALTER TABLE activity DISABLE ROW LEVEL SECURITY;
ALTER TABLE hq_changeset NO FORCE ROW LEVEL SECURITY;
ALTER TABLE hq_changeset DISABLE ROW LEVEL SECURITY;

UPDATE athlete a SET deactivation_reason = substr(c.summary, length('Deactivate athlete ' || a.name || ' (') + 1, length(c.summary) - length('Deactivate athlete ' || a.name || ' (') - 1)
FROM (
  SELECT DISTINCT ON ((changes->0->>'id')) changes->0->>'id' AS athlete_id, summary
  FROM hq_changeset WHERE verb = 'athletes.deactivate' AND status = 'applied'
  ORDER BY (changes->0->>'id'), received_at DESC
) c
WHERE c.athlete_id = a.id::text AND a.status = 'deactivated'
  AND left(c.summary, length('Deactivate athlete ' || a.name || ' (')) = 'Deactivate athlete ' || a.name || ' ('
  AND right(c.summary, 1) = ')';

UPDATE hq_changeset h SET summary = 'Deactivate athlete ' || coalesce((SELECT a.name FROM athlete a WHERE a.id::text = h.changes->0->>'id'), '')
WHERE h.verb = 'athletes.deactivate';

UPDATE activity v SET summary = h.summary FROM hq_changeset h WHERE v.changeset_id = h.id AND h.verb = 'athletes.deactivate';

ALTER TABLE athlete ENABLE ROW LEVEL SECURITY;
ALTER TABLE athlete FORCE ROW LEVEL SECURITY;
ALTER TABLE activity ENABLE ROW LEVEL SECURITY;
ALTER TABLE activity FORCE ROW LEVEL SECURITY;
ALTER TABLE hq_changeset ENABLE ROW LEVEL SECURITY;
ALTER TABLE hq_changeset FORCE ROW LEVEL SECURITY;
`;
