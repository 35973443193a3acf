/** Settings: the organisation and its users. Assistant settings (model key, budgets, disabled tools) arrive with the harness contract. */
import { hasPermission } from '../../../models/roles';
import { readVerb } from '../bridge';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { roleLabel } from '../format';
import { useSession } from '../store';

export function Settings() {
  const me = useSession((s) => s.me)!;
  const canUsers = hasPermission(me.role, 'user.manage');
  const users = useLoad(() => (canUsers ? readVerb('users.list') : Promise.resolve({ users: [] })), 'settings-users');
  return (
    <Page page="settings" state={users.state} title="Settings">
      <section className="card">
        <h2>Organisation</h2>
        <dl className="facts"><dt>Name</dt><dd>{me.org_name}</dd><dt>Signed in as</dt><dd>{me.display_name} ({roleLabel(me.role)})</dd></dl>
      </section>
      <section className="card" aria-labelledby="assistant-settings">
        <h2 id="assistant-settings">Assistant</h2>
        <p className="muted">The model key, monthly budgets with month-to-date spend, and disabled tools are managed here once the assistant is connected to this build.</p>
      </section>
      {users.state === 'error' ? <ErrorNote error={users.error} /> : null}
      {canUsers && users.state === 'ready' ? (
        <section className="card">
          <h2>Users</h2>
          <table className="table">
            <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th></tr></thead>
            <tbody>
              {users.data.users.map((u) => (
                <tr key={u.id}><th scope="row">{u.display_name}</th><td>{u.email}</td><td>{roleLabel(u.role)}</td><td><span className={`badge ${u.active ? 'ok' : 'muted'}`}>{u.active ? 'active' : 'deactivated'}</span></td></tr>
              ))}
            </tbody>
          </table>
        </section>
      ) : null}
    </Page>
  );
}
