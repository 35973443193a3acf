/**
 * HQ 0015: an HQ sign-in code ends when the account that issued it loses the standing to issue it
 * (issue 12 final review B-d: a code an administrator issued for another admin account still let
 * that account in for 24 hours after the owner deactivated the administrator). A code is checked
 * at spend against its own account's stamp (HQ 0014) only; the issuer's row may be out of the
 * spending transaction's sight (an athlete's sign-in runs under that athlete's row-level scope).
 * So the change itself ends the codes: when an `app_user` row's role, active flag or deletion
 * changes, every unused, unrevoked code it issued is revoked in the same transaction
 * (`revoked_at` = the transaction's time). A PIN or name change of the issuer leaves them.
 *
 * The trigger function runs as the caller (not SECURITY DEFINER): it updates codes under the
 * caller's tenant, and every writer of another account's role or flag (an owner's or
 * administrator's upload, sync/write/apply.ts; the operator's tools) writes in that account's org.
 * Forward-only: never edit once shipped.
 */
export const sql = `
CREATE FUNCTION hq_revoke_codes_issued_by() RETURNS trigger LANGUAGE plpgsql AS $f$
BEGIN
  UPDATE hq_enrolment_code SET revoked_at = now()
   WHERE issued_by = NEW.id AND used_at IS NULL AND revoked_at IS NULL;
  RETURN NULL;
END
$f$;
REVOKE ALL ON FUNCTION hq_revoke_codes_issued_by() FROM PUBLIC;
GRANT EXECUTE ON FUNCTION hq_revoke_codes_issued_by() TO hq_app;

CREATE TRIGGER app_user_issuer_change AFTER UPDATE OF role, active, deleted_at ON app_user
  FOR EACH ROW
  WHEN (OLD.role IS DISTINCT FROM NEW.role OR OLD.active IS DISTINCT FROM NEW.active OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at)
  EXECUTE FUNCTION hq_revoke_codes_issued_by();
`;
