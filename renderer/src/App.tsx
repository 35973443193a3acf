/** The app shell: sign-in, or navigation + the current page + the assistant side panel. */
import { useEffect } from 'react';
import { canOpen, navFor } from './access';
import { AssistantPanel } from './assistant/AssistantPanel';
import { forget, resumeRemembered } from './assistant/client';
import { ErrorNote, Denied, Page } from './components/Page';
import { roleLabel } from './format';
import { Activity } from './pages/Activity';
import { Approvals } from './pages/Approvals';
import { AthleteDetail } from './pages/AthleteDetail';
import { Athletes } from './pages/Athletes';
import { Capture } from './pages/Capture';
import { Fees } from './pages/Fees';
import { Help } from './pages/Help';
import { RunTrace } from './pages/RunTrace';
import { Settings } from './pages/Settings';
import { SignIn } from './pages/SignIn';
import { Squads } from './pages/Squads';
import { SyncIndicator } from './sync/SyncIndicator';
import { SyncPage } from './sync/SyncPage';
import { followSyncStatus } from './sync/store';
import type { Route } from './router';
import { href, navigate, useRoute } from './router';
import { useSession } from './store';

function CurrentPage({ route }: { route: Route }) {
  switch (route.page) {
    case 'athletes':
      return <Athletes />;
    case 'athlete':
      return <AthleteDetail key={route.id} id={route.id} tab={route.tab} />;
    case 'squads':
      return <Squads />;
    case 'fees':
      return <Fees />;
    case 'activity':
      return <Activity />;
    case 'approvals':
      return <Approvals />;
    case 'trace':
      return <RunTrace runId={route.runId} />;
    case 'settings':
      return <Settings />;
    case 'capture':
      return <Capture key={`${route.tab}/${route.id ?? ''}`} tab={route.tab} id={route.id} />;
    case 'sync':
      return <SyncPage />;
    case 'help':
      return <Help key={route.slug ?? ''} slug={route.slug} anchor={route.anchor} />;
    case 'notfound':
      return (
        <Page page="notfound" state="ready" title="Page not found">
          <p>
            There is no page at <code>{route.path}</code>.
          </p>
        </Page>
      );
  }
}

export function App() {
  const { status, me, startError, init, signOut } = useSession();
  const route = useRoute();
  useEffect(() => {
    void init();
  }, [init]);
  useEffect(() => {
    document.body.dataset.session = status;
    if (status === 'signedOut') forget();
  }, [status]);
  // A reload replays the run this tab was following.
  useEffect(() => {
    if (me) resumeRemembered(me.user_id);
  }, [me]);
  // The sync indicator follows the device's status while someone is signed in.
  useEffect(() => (status === 'signedIn' ? followSyncStatus() : undefined), [status]);
  // An athlete's home is their own record.
  useEffect(() => {
    if (me?.role === 'athlete' && route.page === 'athletes' && me.linked_athlete_id) navigate({ page: 'athlete', id: me.linked_athlete_id, tab: 'overview' });
  }, [me, route.page]);

  if (status === 'loading')
    return (
      <p className="muted boot" role="status">
        Starting…
      </p>
    );
  if (status === 'signedOut' || !me) {
    return (
      <>
        {startError ? (
          <div className="boot">
            <ErrorNote error={startError} />
          </div>
        ) : null}
        <SignIn />
      </>
    );
  }
  const nav = navFor(me.role, me.linked_athlete_id);
  const allowed = canOpen(me.role, route);
  return (
    <div className="shell">
      <a
        className="skip"
        href="#page-title"
        onClick={(e) => {
          e.preventDefault();
          document.getElementById('page-title')?.focus();
        }}
      >
        Skip to content
      </a>
      <nav className="sidenav" aria-label="Main">
        <div className="brand">Athlete Intelligence</div>
        <ul>
          {nav.map((n) => (
            <li key={n.label}>
              <a
                href={href(n.route)}
                aria-current={n.page === route.page || (n.page === 'athletes' && route.page === 'athlete') ? 'page' : undefined}
                data-nav={n.page}
              >
                {n.label}
              </a>
            </li>
          ))}
        </ul>
        <SyncIndicator />
        <div className="whoami">
          <div>{me.display_name}</div>
          <div className="muted small">
            {roleLabel(me.role)} · {me.org_name}
          </div>
          <button type="button" className="link" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      </nav>
      <div className="content">
        {allowed ? (
          <CurrentPage route={route} />
        ) : (
          <Denied page={route.page === 'athlete' ? `athlete-${route.tab}` : route.page === 'capture' ? `capture-${route.tab}` : route.page} />
        )}
      </div>
      <AssistantPanel />
    </div>
  );
}
