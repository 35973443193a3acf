/**
 * The help centre: the versioned help pages shipped with the app, searchable, each with a
 * "Show me" link to the page it is about. The assistant cites the same pages.
 */
import { useEffect, useState } from 'react';
import type { VerbOutput } from '../../../models/verbs';
import { call } from '../bridge';
import { Markdown } from '../components/Markdown';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { hashForAppPath, href } from '../router';
import { useSession } from '../store';

export function Help({ slug, anchor }: { slug?: string; anchor?: string }) {
  return slug ? <HelpPage slug={slug} anchor={anchor} /> : <HelpIndex />;
}

function HelpIndex() {
  const pages = useLoad(() => call('help.listPages', {}), 'help-pages');
  const [q, setQ] = useState('');
  const [result, setResult] = useState<VerbOutput<'help.search'> | null>(null);
  async function search(e: React.FormEvent) {
    e.preventDefault();
    if (!q.trim()) return;
    setResult(await call('help.search', { query: q.trim(), limit: 8 }).catch(() => null));
  }
  return (
    <Page page="help" state={pages.state} title="Help">
      <form className="filters" role="search" onSubmit={(e) => void search(e)}>
        <label>
          Search the help centre
          <input type="search" value={q} onChange={(e) => setQ(e.target.value)} placeholder="e.g. sign off return to play" />
        </label>
        <button type="submit">Search</button>
      </form>
      {result ? (
        <section className="card" aria-label="Search results" data-covered={result.covered ? 'true' : 'false'}>
          {result.covered ? (
            <ol className="help-results">
              {result.passages.map((p) => (
                <li key={`${p.slug}#${p.anchor}`}>
                  <a href={hashForAppPath(p.link)}>
                    {p.title} — {p.heading}
                  </a>{' '}
                  <span className="muted small">v{p.version}</span>
                  <div className="small">{p.snippet.replace(/\[|\]/g, '')}</div>
                </li>
              ))}
            </ol>
          ) : (
            <p>The help centre does not cover “{result.query}”. Ask a club administrator.</p>
          )}
        </section>
      ) : null}
      {pages.state === 'error' ? <ErrorNote error={pages.error} /> : null}
      {pages.state === 'ready' ? (
        <section className="card">
          <h2>All help pages</h2>
          <ul className="help-index">
            {pages.data.pages.map((p) => (
              <li key={p.slug}>
                <a href={href({ page: 'help', slug: p.slug })}>{p.title}</a> <span className="muted small">v{p.version}</span>
              </li>
            ))}
          </ul>
          <p className="muted small">
            Keyboard: <kbd>Tab</kbd> moves between controls; in the athlete list <kbd>↑</kbd>/<kbd>↓</kbd>, <kbd>Page Up</kbd>/<kbd>Page Down</kbd>,{' '}
            <kbd>Home</kbd>/<kbd>End</kbd> move and <kbd>Enter</kbd> opens; in the assistant box <kbd>Ctrl</kbd>+<kbd>Enter</kbd> sends.
          </p>
        </section>
      ) : null}
    </Page>
  );
}

function HelpPage({ slug, anchor }: { slug: string; anchor?: string }) {
  const me = useSession((s) => s.me);
  const page = useLoad(() => call('help.getPage', { slug }), slug);
  useEffect(() => {
    if (page.state === 'ready' && anchor) document.getElementById(`help-${anchor}`)?.scrollIntoView();
  }, [page.state, anchor]);
  const athleteId = me?.role === 'athlete' ? me.linked_athlete_id : null;
  return (
    <Page
      page="help-page"
      state={page.state}
      title={page.data?.title ?? 'Help'}
      actions={
        page.data ? (
          <a className="button" href={hashForAppPath(page.data.app_path, athleteId)}>
            Show me
          </a>
        ) : null
      }
    >
      {page.state === 'error' ? <ErrorNote error={page.error} /> : null}
      {page.state === 'ready' ? (
        <article className="card help-article">
          <p className="muted small">
            Version {page.data.version} · <a href={href({ page: 'help' })}>All help pages</a>
          </p>
          <Markdown body={page.data.body} athleteId={athleteId} skipTitle />
        </article>
      ) : null}
    </Page>
  );
}
