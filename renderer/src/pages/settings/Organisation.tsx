/**
 * Settings → Organisation: the organisation's name and who is signed in; for settings.manage
 * (owner, admin, super admin) on a device not enrolled for sync, Rename… (`settings.updateOrganisation`, with the row version the
 * card showed: a rename made meanwhile comes back as a conflict with the name now stored, never a
 * silent overwrite). The new name shows at once here and in the app's shell. On an enrolled device
 * the name is HQ's (`set_at_hq`): the card says so and offers no Rename.
 */
import { useState } from 'react';
import type { OrganisationView } from '../../../../models/contract';
import type { ErrorPayload } from '../../../../models/errors';
import { hasPermission } from '../../../../models/roles';
import { CallError, call } from '../../bridge';
import { Field, FormDialog, SavedNote, friendlyIssue, useEntryForm } from '../../components/Form';
import { ErrorNote } from '../../components/Page';
import { useLoad } from '../../components/useLoad';
import { roleLabel } from '../../format';
import { useSession } from '../../store';

/** The Organisation card of Settings. */
export function OrganisationSection() {
  const me = useSession((s) => s.me)!;
  const canRename = hasPermission(me.role, 'settings.manage');
  const data = useLoad(() => call('settings.organisation', {}), 'settings-organisation');
  // The organisation as the card showed it when Rename… was pressed (the dialog saves against its version).
  const [renaming, setRenaming] = useState<OrganisationView | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const org = data.state === 'ready' ? data.data : null;
  return (
    <section className="card" aria-labelledby="organisation-settings" data-section="organisation">
      <div className="card-head">
        <h2 id="organisation-settings">Organisation</h2>
        {canRename && org && !org.set_at_hq ? (
          <button
            type="button"
            className="primary"
            data-action="edit-org"
            onClick={() => {
              setSaved(null);
              setRenaming(org);
            }}
          >
            Rename…
          </button>
        ) : null}
      </div>
      <SavedNote text={saved} />
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      <dl className="facts">
        <dt>Name</dt>
        <dd data-org-name>{org?.name ?? me.org_name}</dd>
        <dt>Signed in as</dt>
        <dd>
          {me.display_name} ({roleLabel(me.role)})
        </dd>
      </dl>
      {canRename && org?.set_at_hq ? (
        <p className="small muted" data-testid="org-at-hq">
          This device syncs with HQ, which holds the organisation&apos;s name: HQ&apos;s operator renames it, and every device shows the new name after its next
          sync.
        </p>
      ) : null}
      {renaming ? (
        <RenameDialog
          org={renaming}
          reload={data.reload}
          onClose={() => setRenaming(null)}
          onSaved={(next) => {
            setRenaming(null);
            setSaved(`Organisation renamed to ${next.name}`);
            // The shell and the sign-in picker show the new name without a reload.
            useSession.setState((s) => (s.me ? { me: { ...s.me, org_name: next.name } } : {}));
            data.reload();
          }}
        />
      ) : null}
    </section>
  );
}

/** Rename: the name (1–200 characters), saved against the version the card showed. */
function RenameDialog({ org, reload, onClose, onSaved }: { org: OrganisationView; reload(): void; onClose(): void; onSaved(o: OrganisationView): void }) {
  const [name, setName] = useState(org.name);
  // The version this form saves against; after a conflict, the one now stored (shown next to the field).
  const [base, setBase] = useState<OrganisationView>(org);
  const [now, setNow] = useState<OrganisationView | null>(null);
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [busy, setBusy] = useState(false);
  // Not a changeset verb (the organisation is not a synced record table): a local form with the
  // same field markup, states and messages as the others.
  const form = useEntryForm('org-name');
  const issue = error?.issues?.find((i) => i.path === 'name');
  const orgForm = {
    ...form,
    state: busy ? ('saving' as const) : error?.code === 'Conflict' ? ('conflict' as const) : error ? ('error' as const) : ('idle' as const),
    error,
    issueFor: (f: string) => (f === 'name' && issue ? friendlyIssue(issue.message) : null),
  };
  async function submit() {
    setBusy(true);
    setError(null);
    try {
      onSaved(await call('settings.updateOrganisation', { name, expected_version: base.version }));
    } catch (e) {
      const p: ErrorPayload = e instanceof CallError ? e.payload : { code: 'Internal', message: 'The name could not be saved.' };
      setError(p);
      if (p.code === 'Conflict') {
        // Show the name now stored; saving again (after checking it) applies against it.
        const current = await call('settings.organisation', {}).catch(() => null);
        if (current) {
          setNow(current);
          setBase(current);
          useSession.setState((st) => (st.me ? { me: { ...st.me, org_name: current.name } } : {}));
        }
        reload();
      }
    } finally {
      setBusy(false);
    }
  }
  return (
    <FormDialog form={orgForm} title="Rename the organisation" submitLabel="Save name" onSubmit={() => void submit()} onClose={onClose}>
      <Field
        label="Organisation name"
        name="name"
        form={orgForm}
        wide
        hint="Shown on the sign-in screen, in the app's header and to the assistant"
        current={now && now.name !== name ? now.name : null}
      >
        <input type="text" value={name} onChange={(e) => setName(e.target.value)} maxLength={200} autoComplete="organization" required />
      </Field>
    </FormDialog>
  );
}
