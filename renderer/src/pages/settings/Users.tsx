/**
 * Settings → Users (user.manage): the organisation's accounts, Add user, Change role (only the
 * roles the signed-in role may grant, models/roles.ts GRANTABLE_ROLES), Budget (the user's own
 * monthly assistant cap), Deactivate / Reactivate, and Set PIN (an added account signs in once a
 * PIN is set). Role, budget and (de)activation go through `forms.submit` (`users.create` /
 * `users.update`, the verbs the assistant uses too), like every other form; the PIN through
 * `admin.setPin` (credentials never travel in a changeset). Accounts whose role the signed-in role
 * cannot manage, and one's own account, show no actions. Athlete accounts are added, relinked and
 * given a PIN only by a role that reads what they read (models/roles.ts `canLinkAthleteAccount`,
 * enforced by the service): an admin is offered no athlete role, and on an athlete account (or one
 * linked to an athlete's record) only Budget and Deactivate / Reactivate. Set / Reset PIN is offered
 * only where models/roles.ts `pinRefusal` allows it (an account whose permissions are within the
 * signed-in role's own; an owner any non-owner account), so a super admin sets no clinician's PIN.
 * On a device enrolled with HQ by the signed-in user, "HQ sign-in code…" gets a one-time code for an active account (to
 * enrol a device or sign in to HQ with their PIN; sync/SignInCode.tsx), offered exactly where Set
 * PIN is: HQ applies the same rule (sync/auth/enrolment-codes.ts) and answers Forbidden otherwise.
 */
import type { SelectHTMLAttributes } from 'react';
import { useEffect, useState } from 'react';
import type { Role } from '../../../../models/roles';
import { GRANTABLE_ROLES, SELF_SCOPED_ROLES, canLinkAthleteAccount, canManageRole, pinRefusal } from '../../../../models/roles';
import type { VerbOutput } from '../../../../models/verbs';
import type { ErrorPayload } from '../../../../models/errors';
import { CallError, call } from '../../bridge';
import { Field, FormDialog, SavedNote, friendlyIssue, shownRows, useEntryForm } from '../../components/Form';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { numberInput, roleLabel } from '../../format';
import { useSession } from '../../store';
import { SignInCodeDialog } from '../../sync/SignInCode';
import { useSync } from '../../sync/store';
import { RecordTable } from './RecordTable';

type UserRow = VerbOutput<'users.list'>['users'][number];
type AthleteOption = { id: string; name: string };

const usd = (n: number | null) => (n === null ? 'no cap' : n.toLocaleString('en-US', { style: 'currency', currency: 'USD' }));

type Open =
  | { kind: 'add' }
  | { kind: 'role'; user: UserRow }
  | { kind: 'budget'; user: UserRow }
  | { kind: 'active'; user: UserRow }
  | { kind: 'pin'; user: UserRow }
  | { kind: 'code'; user: UserRow }
  | null;

/** The Users card of Settings. */
export function UsersSection() {
  const me = useSession((s) => s.me)!;
  const data = useLoad(() => call('users.list', {}), 'settings-users');
  const athletes = useLoad(
    () =>
      call('athletes.list', { status: 'active', limit: 5000 })
        .then((r) => r.athletes.map((a) => ({ id: a.id, name: a.name })))
        .catch(() => [] as AthleteOption[]),
    'settings-users-athletes',
  );
  const [open, setOpen] = useState<Open>(null);
  const [saved, setSaved] = useState<string | null>(null);
  // Sign-in codes come from HQ: offered only on a device enrolled with it, by the signed-in user's
  // own account (main/sync/engine.ts issueEnrolmentCode: never through another user's HQ sign-in).
  const deviceEnrolled = useSync((s) => s.status?.enrolled === true);
  const [enrolledHere, setEnrolledHere] = useState(false);
  useEffect(() => {
    if (!deviceEnrolled) return;
    let live = true;
    call('sync.hqSignIn', {}).then(
      (r) => live && setEnrolledHere(r.enrolled_here),
      () => live && setEnrolledHere(false),
    );
    return () => {
      live = false;
    };
  }, [deviceEnrolled]);
  const enrolled = deviceEnrolled && enrolledHere;
  // Athlete accounts reach an athlete's wellness and vitals: only a role that reads those itself
  // (models/roles.ts canLinkAthleteAccount) adds, links or sets the PIN of one; an admin is not offered it.
  const mayLink = canLinkAthleteAccount(me.role);
  const grantable = GRANTABLE_ROLES[me.role].filter((r) => mayLink || !SELF_SCOPED_ROLES.has(r));
  const done = (s: string) => {
    setOpen(null);
    setSaved(s);
  };
  const athleteList = athletes.state === 'ready' ? athletes.data : [];
  const athleteName = (id: string | null) => athleteList.find((a) => a.id === id)?.name ?? null;
  return (
    <section className="card" aria-labelledby="users-settings" data-section="users">
      <div className="card-head">
        <h2 id="users-settings">Users</h2>
        {grantable.length > 0 ? (
          <button
            type="button"
            className="primary"
            data-action="add-user"
            onClick={() => {
              setSaved(null);
              setOpen({ kind: 'add' });
            }}
          >
            Add user
          </button>
        ) : null}
      </div>
      <p className="small muted">
        As {roleLabel(me.role)} you can add and change {grantable.length ? grantable.map(roleLabel).join(', ') : 'no'} accounts. A new account signs in on this
        device once you set its PIN.
        {grantable.length > 0 && !mayLink ? (
          <span data-note="athlete-accounts">
            {' '}
            An owner adds athlete accounts, links them to an athlete and sets their PINs: whoever holds one reads that athlete's wellness and vitals, which your
            role does not.
          </span>
        ) : null}
      </p>
      <SavedNote text={saved} />
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      {open?.kind === 'add' ? <AddUserDialog grantable={grantable} athletes={athleteList} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'role' ? <RoleDialog user={open.user} grantable={grantable} athletes={athleteList} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'budget' ? <BudgetDialog user={open.user} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'active' ? <ActiveDialog user={open.user} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'pin' ? <PinDialog user={open.user} onClose={() => setOpen(null)} onSaved={done} /> : null}
      {open?.kind === 'code' ? <SignInCodeDialog user={open.user} onClose={() => setOpen(null)} /> : null}
      {data.state === 'ready' ? (
        <RecordTable
          caption="Users"
          rows={data.data.users}
          rowKey={(u) => u.id}
          rowAttr="user"
          rowId={(u) => u.email}
          name={{ label: 'Name', cell: (u) => u.display_name }}
          columns={[
            { label: 'Email', cell: (u) => <span className="break">{u.email}</span> },
            {
              label: 'Role',
              attr: 'user-role',
              cell: (u) => {
                const linked = u.role === 'athlete' ? athleteName(u.linked_athlete_id) : null;
                return (
                  <>
                    {roleLabel(u.role)}
                    {linked ? <span className="small muted"> ({linked})</span> : null}
                  </>
                );
              },
            },
            {
              label: 'Status',
              attr: 'user-status',
              cell: (u) => <span className={`badge ${u.active ? 'ok' : 'muted'}`}>{u.active ? 'active' : 'deactivated'}</span>,
            },
            { label: 'PIN', cell: (u) => (u.has_pin ? 'set' : <span className="badge warn">not set</span>) },
            { label: 'Monthly assistant cap', num: true, attr: 'user-budget', cell: (u) => usd(u.budget_cap_usd) },
          ]}
          actions={(u) => {
            if (u.id === me.user_id || !canManageRole(me.role, u.role)) return [];
            // An athlete account's role, link and PIN are an owner's (see mayLink); budget and
            // (de)activation stay with whoever manages the account.
            const reach = mayLink || (!SELF_SCOPED_ROLES.has(u.role) && u.linked_athlete_id === null);
            // Offered only where the service would set it (models/roles.ts pinRefusal): whoever
            // sets a PIN can sign in as the account.
            const pinOk = pinRefusal(me.role, u) === null;
            return [
              ...(reach ? [{ id: 'change-role', label: 'Change role…', onClick: () => setOpen({ kind: 'role', user: u }) }] : []),
              { id: 'set-budget', label: 'Budget…', onClick: () => setOpen({ kind: 'budget', user: u }) },
              {
                id: u.active ? 'deactivate-user' : 'reactivate-user',
                label: u.active ? 'Deactivate…' : 'Reactivate…',
                onClick: () => setOpen({ kind: 'active', user: u }),
              },
              ...(pinOk ? [{ id: 'set-pin', label: u.has_pin ? 'Reset PIN…' : 'Set PIN…', onClick: () => setOpen({ kind: 'pin', user: u }) }] : []),
              // A code signs the account in to HQ (with its PIN): HQ's rule is the one for setting
              // that PIN (sync/auth/enrolment-codes.ts); another owner's is theirs or the operator's.
              ...(pinOk && enrolled && u.active ? [{ id: 'signin-code', label: 'HQ sign-in code…', onClick: () => setOpen({ kind: 'code', user: u }) }] : []),
            ];
          }}
        />
      ) : null}
    </section>
  );
}

/**
 * The select sits inside a `Field`, which gives its child the label's `id`, `name` and the
 * aria attributes: they are passed on to the `<select>` so the label names it.
 */
type SelectAttrs = Omit<SelectHTMLAttributes<HTMLSelectElement>, 'value' | 'onChange'>;

function RoleSelect({ value, grantable, onChange, ...attrs }: SelectAttrs & { value: Role | ''; grantable: readonly Role[]; onChange(r: Role | ''): void }) {
  return (
    <select {...attrs} value={value} onChange={(e) => onChange(e.target.value as Role | '')} required>
      <option value="">Choose…</option>
      {grantable.map((r) => (
        <option key={r} value={r}>
          {roleLabel(r)}
        </option>
      ))}
    </select>
  );
}

function AthleteSelect({
  value,
  athletes,
  onChange,
  ...attrs
}: SelectAttrs & { value: string; athletes: readonly AthleteOption[]; onChange(id: string): void }) {
  return (
    <select {...attrs} value={value} onChange={(e) => onChange(e.target.value)}>
      <option value="">Choose the athlete…</option>
      {athletes.map((a) => (
        <option key={a.id} value={a.id}>
          {a.name}
        </option>
      ))}
    </select>
  );
}

/** Add user: email, name, a role this role may grant, the athlete record for an athlete account. */
function AddUserDialog({
  grantable,
  athletes,
  onClose,
  onSaved,
}: {
  grantable: readonly Role[];
  athletes: readonly AthleteOption[];
  onClose(): void;
  onSaved(s: string): void;
}) {
  const [v, setV] = useState({ email: '', display_name: '', role: '' as Role | '', linked_athlete_id: '' });
  const form = useEntryForm('user-add', { onSaved: (s) => onSaved(`${s}. Set a PIN so they can sign in.`) });
  function submit() {
    void form.submit('users.create', {
      email: v.email.trim(),
      display_name: v.display_name.trim(),
      ...(v.role ? { role: v.role } : {}),
      linked_athlete_id: v.role === 'athlete' && v.linked_athlete_id ? v.linked_athlete_id : null,
    });
  }
  return (
    <FormDialog form={form} title="Add user" submitLabel="Add user" onSubmit={submit} onClose={onClose}>
      <Field label="Email" name="email" form={form} hint="Used to sign in">
        <input type="email" value={v.email} onChange={(e) => setV((x) => ({ ...x, email: e.target.value }))} maxLength={200} autoComplete="off" required />
      </Field>
      <Field label="Full name" name="display_name" form={form}>
        <input type="text" value={v.display_name} onChange={(e) => setV((x) => ({ ...x, display_name: e.target.value }))} maxLength={200} required />
      </Field>
      <Field label="Role" name="role" form={form} hint="Only the roles you may grant are listed">
        <RoleSelect value={v.role} grantable={grantable} onChange={(role) => setV((x) => ({ ...x, role }))} />
      </Field>
      {v.role === 'athlete' ? (
        <Field label="Athlete record" name="linked_athlete_id" form={form} hint="An athlete account sees only this record">
          <AthleteSelect value={v.linked_athlete_id} athletes={athletes} onChange={(id) => setV((x) => ({ ...x, linked_athlete_id: id }))} />
        </Field>
      ) : null}
    </FormDialog>
  );
}

/** Change role: the roles this role may grant; an athlete account needs its athlete record. */
function RoleDialog({
  user,
  grantable,
  athletes,
  onClose,
  onSaved,
}: {
  user: UserRow;
  grantable: readonly Role[];
  athletes: readonly AthleteOption[];
  onClose(): void;
  onSaved(s: string): void;
}) {
  const [role, setRole] = useState<Role | ''>(user.role);
  const [linked, setLinked] = useState(user.linked_athlete_id ?? '');
  const form = useEntryForm('user-role', { onSaved });
  function submit() {
    const input: Record<string, unknown> = { id: user.id };
    if (role !== user.role) input.role = role;
    if (role === 'athlete' && (linked || null) !== user.linked_athlete_id) input.linked_athlete_id = linked || null;
    if (role === 'athlete' && !linked) input.linked_athlete_id = null;
    void form.submit('users.update', input, shownRows(user));
  }
  return (
    <FormDialog form={form} title={`Change role of ${user.display_name}`} submitLabel="Save role" onSubmit={submit} onClose={onClose}>
      <Field label="Role" name="role" form={form} hint={`Now: ${roleLabel(user.role)}`}>
        <RoleSelect value={role} grantable={grantable} onChange={setRole} />
      </Field>
      {role === 'athlete' ? (
        <Field label="Athlete record" name="linked_athlete_id" form={form} hint="An athlete account sees only this record">
          <AthleteSelect value={linked} athletes={athletes} onChange={setLinked} />
        </Field>
      ) : null}
    </FormDialog>
  );
}

/**
 * The user's own monthly assistant budget (USD per calendar month, UTC; 0–100,000; empty = no
 * personal cap, the organisation's cap still applies). Saved through `users.update`
 * (`budget_cap_usd`), which the assistant uses too; a run is refused once the cap is reached.
 */
function BudgetDialog({ user, onClose, onSaved }: { user: UserRow; onClose(): void; onSaved(s: string): void }) {
  const [cap, setCap] = useState(user.budget_cap_usd === null ? '' : String(user.budget_cap_usd));
  const form = useEntryForm('user-budget', { onSaved });
  function submit() {
    // Sent as typed: the service's schema judges it (a number out of range, or text that is not a
    // number, comes back named at this field).
    const value = numberInput(cap) ?? null;
    void form.submit('users.update', { id: user.id, budget_cap_usd: value }, shownRows(user));
  }
  return (
    <FormDialog
      form={form}
      title={`Assistant budget of ${user.display_name}`}
      submitLabel="Save budget"
      onSubmit={submit}
      onClose={onClose}
      intro={
        <p className="small muted">
          What Kinetix may spend on {user.display_name}'s questions each calendar month (UTC). Once it is reached their new runs are refused before any paid
          call; the organisation's cap still applies to everyone.
        </p>
      }
    >
      <Field label="Monthly assistant budget" unit="USD" name="budget_cap_usd" form={form} hint={`Now: ${usd(user.budget_cap_usd)}. Empty for no personal cap`}>
        <input type="text" inputMode="decimal" value={cap} onChange={(e) => setCap(e.target.value)} placeholder="no cap" />
      </Field>
    </FormDialog>
  );
}

/** Deactivate (signs the account out of the picker and refuses every call) or reactivate. */
function ActiveDialog({ user, onClose, onSaved }: { user: UserRow; onClose(): void; onSaved(s: string): void }) {
  const form = useEntryForm(user.active ? 'user-deactivate' : 'user-reactivate', { onSaved });
  return (
    <FormDialog
      form={form}
      title={user.active ? `Deactivate ${user.display_name}?` : `Reactivate ${user.display_name}?`}
      submitLabel={user.active ? 'Deactivate user' : 'Reactivate user'}
      danger={user.active}
      onSubmit={() => void form.submit('users.update', { id: user.id, active: !user.active }, shownRows(user))}
      onClose={onClose}
      intro={
        user.active ? (
          <p>
            {user.display_name} can no longer sign in, and every call they make from now on is refused. <strong>Nothing is deleted:</strong> what they recorded
            stays, with their name on it. Reactivate them here at any time.
          </p>
        ) : (
          <p>{user.display_name} can sign in again with their PIN, with the role they had.</p>
        )
      }
    />
  );
}

/** Set or reset a PIN (4–8 digits). Never shown again; only its hash is stored. */
function PinDialog({ user, onClose, onSaved }: { user: UserRow; onClose(): void; onSaved(s: string): void }) {
  const [pin, setPin] = useState('');
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [busy, setBusy] = useState(false);
  // A small local form (not a changeset), with the same field markup and states as the others.
  const form = useEntryForm('user-pin');
  const issue = error?.issues?.find((i) => i.path === 'pin');
  const pinForm = {
    ...form,
    state: busy ? ('saving' as const) : error ? ('error' as const) : ('idle' as const),
    error,
    issueFor: (f: string) => (f === 'pin' && issue ? friendlyIssue(issue.message) : null),
  };
  async function submit() {
    setBusy(true);
    setError(null);
    try {
      await call('admin.setPin', { user_id: user.id, pin });
      onSaved(`PIN set for ${user.display_name}`);
    } catch (e) {
      setError(e instanceof CallError ? e.payload : { code: 'Internal', message: 'The PIN could not be set.' });
    } finally {
      setBusy(false);
    }
  }
  return (
    <FormDialog
      form={pinForm}
      title={`${user.has_pin ? 'Reset' : 'Set'} PIN for ${user.display_name}`}
      submitLabel="Set PIN"
      onSubmit={() => void submit()}
      onClose={onClose}
      intro={<p className="small muted">Tell them the PIN in person. It is not shown again; only a hash of it is stored.</p>}
    >
      <Field label="New PIN" unit="4–8 digits" name="pin" form={pinForm}>
        <input type="password" inputMode="numeric" autoComplete="new-password" value={pin} onChange={(e) => setPin(e.target.value)} maxLength={8} />
      </Field>
    </FormDialog>
  );
}
