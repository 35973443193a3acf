/**
 * A page frame: `<main data-page data-state>` is what tests wait for (never timers), plus the
 * title, and error/denied messages in one style.
 */
import type { ReactNode } from 'react';
import { useEffect } from 'react';
import type { ErrorPayload } from '../../../models/errors';

/** Named app event fired when a page reaches a state (`ai:page`, detail `{ page, state }`). */
export const PAGE_EVENT = 'ai:page';

export function Page(props: { page: string; state: 'loading' | 'ready' | 'error' | 'denied'; title: ReactNode; actions?: ReactNode; children?: ReactNode }) {
  useEffect(() => {
    document.title = `${typeof props.title === 'string' ? props.title : props.page} — Athlete Intelligence`;
    window.dispatchEvent(new CustomEvent(PAGE_EVENT, { detail: { page: props.page, state: props.state } }));
    // A named mark for measurements (e.g. time to interactive of the athlete list).
    if (props.state === 'ready' && typeof performance !== 'undefined' && performance.mark) performance.mark(`ai:${props.page}:ready`);
  }, [props.page, props.state, props.title]);
  return (
    <main className="page" data-page={props.page} data-state={props.state} aria-busy={props.state === 'loading'}>
      <header className="page-head">
        <h1 tabIndex={-1} id="page-title">
          {props.title}
        </h1>
        {props.actions ? <div className="page-actions">{props.actions}</div> : null}
      </header>
      {props.state === 'loading' ? (
        <p className="muted" role="status">
          Loading…
        </p>
      ) : null}
      {props.children}
    </main>
  );
}

/** A typed error, said plainly. */
export function ErrorNote({ error }: { error: ErrorPayload }) {
  return (
    <div className="error-note" role="alert" data-error-code={error.code}>
      <strong>
        {error.code === 'Forbidden'
          ? 'Not available for your role'
          : error.code === 'NotFound'
            ? 'Not found'
            : error.code === 'Conflict'
              ? // A stale record names the rows that changed; any other conflict (a duplicate name or
                // code, a state that no longer allows it) is not about "meanwhile".
                error.conflicts?.length
                ? 'Changed meanwhile: nothing was written'
                : 'Not saved: nothing was written'
              : error.code === 'Validation'
                ? 'Nothing was saved: check the values'
                : error.code === 'Unauthenticated'
                  ? 'Signed out'
                  : 'Something went wrong'}
      </strong>
      <p>{error.message}</p>
    </div>
  );
}

/** The page a role cannot use, reached by URL. */
export function Denied({ page }: { page: string }) {
  return (
    <Page page={page} state="denied" title="Not available">
      <div className="error-note" role="alert" data-error-code="Forbidden">
        <strong>Not available for your role</strong>
        <p>This page is not part of what your role can use. If you need it, ask a club administrator.</p>
      </div>
    </Page>
  );
}
