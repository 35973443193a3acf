/**
 * The entry-form machinery every page uses (one path for every write):
 *
 * - {@link useEntryForm}: submits a write verb through the contract's `forms.submit` — the
 *   service plans the same changeset the assistant would (plan → authorise → policy) — with the
 *   row versions and `updated_at`s the form was opened with and one idempotency key per opened form. A one-row
 *   change is applied at once; a change of more than one row, an RTP sign-off, or one that needs
 *   an owner comes back for review and is applied (or declined) through `proposals.approve` /
 *   `proposals.decline`. A stale form ends in state `conflict` with the service's message, and the
 *   page shows the current values next to the fields.
 * - {@link Field}: a labelled field with its unit and hint, and the service's typed validation
 *   message next to it (`aria-invalid`, `aria-describedby`). Each field enters its label in the
 *   form's {@link LabelBook}, so the "Nothing was saved" summary names fields by the label the form
 *   shows, never by column; a control that is not a `Field` (a fieldset of checkboxes) enters its
 *   own with {@link useFieldLabel}.
 * - {@link FormDialog}: a modal `<dialog>` form (Escape closes, focus starts in the first field and
 *   returns to the control that opened it; after the service refuses the input, focus moves to the
 *   first field it named).
 * - {@link ReviewDialog}: the diff of a change awaiting review (see ChangeReview.tsx).
 *
 * Test hooks: every form is `<form data-form=NAME data-state=STATE>`; each state change fires
 * the window event `ai:form` `{ form, state }`; a saved change fires `ai:data-changed`, so the
 * pages showing the record load it again (the new row is visible without a reload).
 */
import type { ReactElement, ReactNode } from 'react';
import { cloneElement, useCallback, useEffect, useId, useLayoutEffect, useRef, useState, useSyncExternalStore } from 'react';
import type { FormSubmitResultView, ProposalItemView, ShownRowState } from '../../../models/contract';
import type { ErrorPayload } from '../../../models/errors';
import { CallError, call, newKey } from '../bridge';
import { ReviewDialog } from './ChangeReview';
import { ErrorNote } from './Page';
import { DATA_CHANGED } from './useLoad';

/** What a form that showed no stored record expects: still nothing stored (the service refuses the submit with Conflict when a row appeared). */
export const NOTHING_STORED = 'nothing-stored' as const;

/** Row id → the version and `updated_at` of each row a form showed (what `submit` quotes back). */
export type ShownRows = Record<string, ShownRowState>;

/**
 * The rows a form showed, as its submit quotes them: id → `{version, updated_at}`. Both are
 * checked: on a device enrolled for sync, HQ's row that replaced a refused local edit can carry
 * the same version with other content, and only `updated_at` tells them apart.
 */
export function shownRows(...rows: readonly { id: string; version: number; updated_at: string }[]): ShownRows {
  return Object.fromEntries(rows.map((r) => [r.id, { version: r.version, updated_at: r.updated_at }]));
}

/** Named app event fired on each form state change. */
export const FORM_EVENT = 'ai:form';

/** Where a form stands. */
export type FormState = 'idle' | 'saving' | 'review' | 'saved' | 'waiting' | 'error' | 'conflict';

/** A change waiting for the user's review. */
export interface PendingReview {
  proposal: ProposalItemView;
  notes: string[];
}

/**
 * The labels a form shows, by field name (the service's issue path segment): filled by each
 * {@link Field} as it renders, read by the error summary. A tiny external store, so the summary
 * follows it without state updates in effects.
 */
export class LabelBook {
  private map: ReadonlyMap<string, string>;
  private readonly listeners = new Set<() => void>();
  constructor(initial: Readonly<Record<string, string>> = {}) {
    this.map = new Map(Object.entries(initial));
  }
  /** Enter (or replace) the label of `field`. */
  set(field: string, label: string): void {
    if (this.map.get(field) === label) return;
    this.map = new Map(this.map).set(field, label);
    for (const l of this.listeners) l();
  }
  readonly subscribe = (l: () => void): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  /** The labels now (a new map after each change). */
  readonly snapshot = (): ReadonlyMap<string, string> => this.map;
}

/**
 * The label the form shows for a service issue `path` ("athlete_id", "per_athlete.3.rpe"): the
 * whole path, else (a nested path) the control holding it, e.g. the per-athlete table, else its
 * last non-index segment; null when no field of the form shows it (the summary then gives the
 * message alone, never a column name).
 */
export function issueLabel(path: string, labels: ReadonlyMap<string, string>): string | null {
  const parts = path.split('.').filter((p) => p !== '' && !/^\d+$/.test(p));
  for (const k of [path, parts.length > 1 ? parts[0] : undefined, parts[parts.length - 1]]) {
    const hit = k === undefined ? undefined : labels.get(k);
    if (hit) return hit;
  }
  return null;
}

/**
 * True when a service issue at `path` belongs to the field named `field`: the same path; the
 * control holding a nested path ("per_athlete.3.rpe" → the per-athlete table, "athlete_ids.2" →
 * the athlete list); or, outside a list, the last segment ("plan.rpe" → rpe). An entry of a list
 * never lights up a top-level field of the same name (row 3's RPE is not the session RPE).
 */
export function issueMatches(path: string, field: string): boolean {
  if (path === field) return true;
  const parts = path.split('.');
  if (parts.length > 1 && parts[0] === field) return true;
  return !parts.some((p) => /^\d+$/.test(p)) && parts[parts.length - 1] === field;
}

/** The "Nothing was saved" lines: each issue as "Label: message" (the message alone when no field shows it), repeats merged. */
export function issueLines(issues: readonly { path: string; message: string }[], labels: ReadonlyMap<string, string>): string[] {
  const lines = issues.map((i) => {
    const label = issueLabel(i.path, labels);
    const msg = friendlyIssue(i.message);
    return label ? `${label}: ${msg}` : msg;
  });
  return [...new Set(lines)];
}

export interface EntryForm {
  name: string;
  /** The labels its fields show (see {@link LabelBook}). */
  labels: LabelBook;
  state: FormState;
  error: ErrorPayload | null;
  review: PendingReview | null;
  /** One line saying what was saved (or what waits for an owner). */
  done: string | null;
  /** The service's message for `field` (see {@link issueMatches}), if any. */
  issueFor(field: string): string | null;
  /**
   * Submit `verb` with `input`. `expected` maps row id → version and `updated_at` the form showed
   * ({@link shownRows}), or is
   * {@link NOTHING_STORED} when the form showed no stored record (a row that appeared since is
   * then a conflict, never silently replaced). Resolves to the outcome (never throws).
   */
  submit(verb: string, input: Record<string, unknown>, expected?: ShownRows | typeof NOTHING_STORED): Promise<FormSubmitResultView | null>;
  /** Approve the change under review (after leaving out `dropIds`, if any). */
  approve(dropIds?: string[]): Promise<void>;
  /** Decline the change under review (nothing is written). */
  cancelReview(): Promise<void>;
  /** Back to a fresh form (new idempotency key). */
  reset(): void;
}

/**
 * A service validation message in words a clinician reads ("Choose one of the options" rather
 * than zod's enum text); messages written by the services themselves pass unchanged.
 */
export function friendlyIssue(message: string): string {
  if (/^Invalid option/i.test(message)) return 'Choose one of the options.';
  if (/expected string to have >=1 characters|^Required$|received undefined/i.test(message)) return 'Required.';
  const big = /expected (?:number|string|array) to (?:be|have) <=?(\d+(?:\.\d+)?)/i.exec(message);
  if (big) return `Too large: at most ${big[1]}.`;
  const small = /expected (?:number|string|array) to (?:be|have) >=?(\d+(?:\.\d+)?)/i.exec(message);
  if (small) return `Too small: at least ${small[1]}.`;
  if (/Invalid ISO date|YYYY-MM-DD|Invalid date/i.test(message)) return 'Enter a date (day, month, year).';
  if (/expected number/i.test(message)) return 'Enter a number: digits, with a point for decimals (7.5), no comma or spaces.';
  return message;
}

function payloadOf(e: unknown): ErrorPayload {
  return e instanceof CallError ? e.payload : { code: 'Internal', message: e instanceof Error ? e.message : 'The change could not be saved.' };
}

function changed(): void {
  window.dispatchEvent(new CustomEvent(DATA_CHANGED));
}

/**
 * A form's submit state. `onSaved` runs after a change was applied (directly or on approval);
 * `onConflict` runs when the service said the form is stale (load the current values there).
 */
export function useEntryForm(
  name: string,
  opts: { onSaved?: (summary: string) => void; onConflict?: () => void; labels?: Readonly<Record<string, string>> } = {},
): EntryForm {
  const [labels] = useState(() => new LabelBook(opts.labels));
  const [state, setState] = useState<FormState>('idle');
  const [error, setError] = useState<ErrorPayload | null>(null);
  const [review, setReview] = useState<PendingReview | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const key = useRef(newKey());
  // The latest callbacks, for event handlers defined once (updated after each render).
  const optsRef = useRef(opts);
  useLayoutEffect(() => {
    optsRef.current = opts;
  });

  useEffect(() => {
    window.dispatchEvent(new CustomEvent(FORM_EVENT, { detail: { form: name, state } }));
  }, [name, state]);

  const fail = useCallback((e: unknown) => {
    const p = payloadOf(e);
    setError(p);
    if (p.code === 'Conflict' && p.conflicts?.length) {
      setState('conflict');
      optsRef.current.onConflict?.();
    } else setState('error');
  }, []);

  const saved = useCallback((summary: string) => {
    setDone(summary);
    setReview(null);
    setState('saved');
    key.current = newKey();
    changed();
    optsRef.current.onSaved?.(summary);
  }, []);

  const submit = useCallback(
    async (verb: string, input: Record<string, unknown>, expected?: ShownRows | typeof NOTHING_STORED) => {
      setState('saving');
      setError(null);
      setDone(null);
      try {
        const r: FormSubmitResultView = await call('forms.submit', {
          verb,
          input,
          idempotency_key: key.current,
          ...(expected === NOTHING_STORED ? { expect_absent: true } : expected ? { expected_versions: expected } : {}),
        });
        if (r.status === 'applied') saved(r.changeset.summary);
        else {
          // The key now names this proposal (a re-send finds it); the next change gets a new one.
          key.current = newKey();
          setReview({ proposal: r.proposal, notes: r.notes });
          setState('review');
        }
        return r;
      } catch (e) {
        fail(e);
        return null;
      }
    },
    [fail, saved],
  );

  const approve = useCallback(
    async (dropIds: string[] = []) => {
      if (!review) return;
      setError(null);
      try {
        let p = review.proposal;
        if (dropIds.length > 0) {
          p = await call('proposals.narrow', { changeset_id: p.id, content_hash: p.contentHash, drop_ids: dropIds });
          setReview({ proposal: p, notes: review.notes });
        }
        if (p.status === 'needs_owner') {
          // Nothing to approve here: it waits for an owner in Approvals.
          setDone(`${p.summary} — waiting for an owner's approval (Approvals).`);
          setReview(null);
          setState('waiting');
          return;
        }
        await call('proposals.approve', { changeset_id: p.id, content_hash: p.contentHash });
        saved(p.summary);
      } catch (e) {
        const err = payloadOf(e);
        // Approved a moment ago (another tab, a double click): that is the outcome wanted, not an error.
        if (err.code === 'Conflict' && /already applied/.test(err.message)) saved(review.proposal.summary);
        else {
          setReview(null);
          fail(e);
        }
      }
    },
    [review, fail, saved],
  );

  const cancelReview = useCallback(async () => {
    const p = review?.proposal;
    setReview(null);
    setState('idle');
    key.current = newKey();
    // Declined whatever its status: one waiting for an owner is withdrawn too (else it would stay
    // in Approvals, and the form, back to a fresh key, would send a second copy).
    if (p && (p.status === 'proposed' || p.status === 'needs_owner')) await call('proposals.decline', { changeset_id: p.id }).catch(() => undefined);
  }, [review]);

  const reset = useCallback(() => {
    setState('idle');
    setError(null);
    setReview(null);
    setDone(null);
    key.current = newKey();
  }, []);

  const issueFor = useCallback(
    (field: string) => {
      const hit = error?.issues?.find((i) => issueMatches(i.path, field));
      return hit ? friendlyIssue(hit.message) : null;
    },
    [error],
  );

  return { name, labels, state, error, review, done, issueFor, submit, approve, cancelReview, reset };
}

/** Enter `label` as what the form shows for `field` (for a control that is not a {@link Field}). */
export function useFieldLabel(form: EntryForm, field: string, label: string): void {
  const book = form.labels;
  useLayoutEffect(() => book.set(field, label), [book, field, label]);
}

/**
 * A labelled field: label with unit, the control (given as the only child; it receives `id`,
 * `aria-invalid` and `aria-describedby`), a hint, the service's message for it, and — after a
 * conflict — the value now stored.
 */
export function Field(props: {
  label: string;
  unit?: string;
  hint?: string;
  name: string;
  form: EntryForm;
  current?: string | null;
  wide?: boolean;
  children: ReactElement<Record<string, unknown>>;
}) {
  const id = useId();
  useFieldLabel(props.form, props.name, props.unit ? `${props.label} (${props.unit})` : props.label);
  const issue = props.form.issueFor(props.name);
  const described = [props.hint ? `${id}-hint` : '', issue ? `${id}-err` : '', props.current ? `${id}-cur` : ''].filter(Boolean).join(' ');
  return (
    <div className={`field${issue ? ' invalid' : ''}${props.wide ? ' wide' : ''}`} data-field={props.name}>
      <label htmlFor={id}>
        {props.label}
        {props.unit ? <span className="unit"> ({props.unit})</span> : null}
      </label>
      {cloneElement(props.children, { id, name: props.name, 'aria-invalid': issue ? true : undefined, 'aria-describedby': described || undefined })}
      {props.hint ? (
        <span className="hint" id={`${id}-hint`}>
          {props.hint}
        </span>
      ) : null}
      {props.current ? (
        <span className="current" id={`${id}-cur`} data-current={props.name}>
          Now stored: {props.current}
        </span>
      ) : null}
      {issue ? (
        <span className="field-error" id={`${id}-err`} role="alert">
          {issue}
        </span>
      ) : null}
    </div>
  );
}

/** The form's error: a stale form, a validation failure (the fields say which), or a refusal. */
export function FormMessages({ form }: { form: EntryForm }) {
  const e = form.error;
  const labels = useSyncExternalStore(form.labels.subscribe, form.labels.snapshot, form.labels.snapshot);
  if (form.state === 'waiting' && form.done)
    return (
      <p className="ok-note" role="status" data-waiting="true">
        {form.done}
      </p>
    );
  if (!e) return null;
  // A record already stored that day: the form shows the service's answer with its tick box (SameDayWarning.tsx).
  if (e.kind === 'SameDayExists') return null;
  // Correct outcomes (undone or approved a moment ago, in another tab) are not errors.
  if (e.code === 'Conflict' && /already (been )?(undone|applied|approved)/i.test(e.message))
    return (
      <p className="ok-note" role="status" data-already="true">
        Already done: {e.message}
      </p>
    );
  if (form.state === 'conflict')
    return (
      <div className="error-note conflict" role="alert" data-error-code="Conflict">
        <strong>Changed since you opened this form</strong>
        <p>{e.message}</p>
      </div>
    );
  if (e.code === 'Validation') {
    return (
      <div className="error-note" role="alert" data-error-code="Validation">
        {/* Without field issues the message is the whole answer (e.g. "Nothing to change: …"). */}
        <strong>{e.issues?.length ? 'Nothing was saved: check the fields marked' : 'Nothing was saved'}</strong>
        {e.issues?.length ? (
          <ul className="small">
            {issueLines(e.issues, labels).map((line) => (
              <li key={line}>{line}</li>
            ))}
          </ul>
        ) : (
          <p>{e.message}</p>
        )}
      </div>
    );
  }
  return <ErrorNote error={e} />;
}

/** A modal form in a native `<dialog>` (focus trap, Escape closes). */
export function FormDialog(props: {
  form: EntryForm;
  title: string;
  submitLabel: string;
  onSubmit(): void;
  onClose(): void;
  intro?: ReactNode;
  wide?: boolean;
  danger?: boolean;
  /** Hide the submit/cancel row (e.g. while a one-time key is shown with its own close button). */
  hideActions?: boolean;
  /** The submit button is disabled and Enter does nothing (e.g. until a warning is acknowledged, while a check runs). */
  submitDisabled?: boolean;
  children?: ReactNode;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    // The control that opened the dialog (focused when it mounts): focus goes back to it when the
    // dialog goes away (Escape, Cancel, saved), as WAI-ARIA APG "Dialog (Modal)" asks.
    const opener = document.activeElement instanceof HTMLElement && !d?.contains(document.activeElement) ? document.activeElement : null;
    const again = opener ? openerSelector(opener) : null;
    if (d && !d.open) d.showModal();
    return () => {
      if (opener?.isConnected) {
        opener.focus();
        return;
      }
      // Saving re-renders the page (the new row shows without a reload), which may replace the
      // opener: once the page has drawn, focus the same control again (found by its action and
      // its row), else the page's saved note, so focus never falls back to <body>.
      requestAnimationFrame(() => refocusAfterClose(again));
    };
  }, []);
  const { form } = props;
  // After the service refused the input, focus the first field it named (marked aria-invalid, its
  // message linked by aria-describedby), else a same-day warning's tick box, else the error note:
  // once per answer.
  const focusedFor = useRef<unknown>(null);
  useEffect(() => {
    const e = form.error;
    if (!e || form.state !== 'error' || focusedFor.current === e) return;
    focusedFor.current = e;
    const f = ref.current?.querySelector('form');
    const target =
      f?.querySelector<HTMLElement>('[aria-invalid="true"]') ??
      f?.querySelector<HTMLElement>('[data-duplicate-warning] input') ??
      f?.querySelector<HTMLElement>('.error-note');
    if (target) {
      if (target.classList.contains('error-note')) target.tabIndex = -1;
      target.focus();
    }
  }, [form.error, form.state]);
  const busy = form.state === 'saving';
  const blocked = busy || props.submitDisabled === true;
  return (
    <dialog
      ref={ref}
      className={`form-dialog${props.wide ? ' wide' : ''}`}
      aria-labelledby={titleId}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      <form
        data-form={form.name}
        data-state={form.state}
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          if (!blocked) props.onSubmit();
        }}
      >
        <h2 id={titleId}>{props.title}</h2>
        {props.intro}
        <div className="fields">{props.children}</div>
        <FormMessages form={form} />
        {props.hideActions ? null : (
          <div className="form-actions">
            <button type="submit" className={props.danger ? 'danger' : 'primary'} disabled={blocked}>
              {busy ? 'Saving…' : props.submitLabel}
            </button>
            <button type="button" onClick={props.onClose}>
              Cancel
            </button>
          </div>
        )}
      </form>
      {form.review ? <ReviewDialog form={form} /> : null}
    </dialog>
  );
}

/**
 * A CSS selector that finds a dialog's opener again after the page re-rendered it: its
 * `data-action`, inside the nearest ancestor that names a record by a `data-*` attribute (a table
 * row's `data-rate-item="CODE"`, `data-athlete="ID"`). Null when the opener has no `data-action`.
 */
function openerSelector(el: HTMLElement): string | null {
  const action = el.getAttribute('data-action');
  if (!action) return null;
  const own = `[data-action="${CSS.escape(action)}"]`;
  for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
    const a = [...p.attributes].find((x) => x.name.startsWith('data-') && x.value !== '' && !/^data-(action|testid|state)$/.test(x.name));
    if (a) return `[${a.name}="${CSS.escape(a.value)}"] ${own}`;
  }
  return own;
}

/** How long (ms) to wait for a re-rendered page to show the opener again before focusing the saved note. */
const REFOCUS_WAIT_MS = 1500;

/**
 * Focus after a dialog closed and its opener is gone: the opener found again once the page has
 * reloaded its rows (watched for up to {@link REFOCUS_WAIT_MS}), else the saved note, else the
 * page heading. Does nothing once something else has focus (another dialog, the user).
 */
function refocusAfterClose(selector: string | null) {
  const idle = () => !document.activeElement || document.activeElement === document.body;
  const fallback = () => {
    if (!idle()) return;
    const t = document.querySelector<HTMLElement>('[data-saved="true"]') ?? document.querySelector<HTMLElement>('main h1, main h2, h1');
    if (!t) return;
    if (!t.hasAttribute('tabindex')) t.setAttribute('tabindex', '-1');
    t.focus();
  };
  const find = () => (selector ? document.querySelector<HTMLElement>(selector) : null);
  const now = find();
  if (now || !selector) {
    if (now && idle()) now.focus();
    else fallback();
    return;
  }
  const obs = new MutationObserver(() => {
    const el = find();
    if (!el) return;
    obs.disconnect();
    clearTimeout(timer);
    if (idle()) el.focus();
  });
  const timer = setTimeout(() => {
    obs.disconnect();
    fallback();
  }, REFOCUS_WAIT_MS);
  obs.observe(document.body, { childList: true, subtree: true });
}

/**
 * After a stale-form conflict: the form's values on top of the row now stored. A field still
 * showing what the form was opened with takes the stored value; a field the user changed keeps
 * theirs. Saving again (against the stored version) then sends only the user's own changes: a
 * field they never touched cannot put back a value another user has just replaced.
 */
export function rebaseValues<T extends object>(values: T, opened: T, stored: T): T {
  const out = { ...values };
  for (const k of Object.keys(stored) as (keyof T)[]) if (values[k] === opened[k]) out[k] = stored[k];
  return out;
}

/** A saved / waiting line a page shows after its dialog closed. */
export function SavedNote({ text }: { text: string | null }) {
  return text ? (
    <p className="ok-note" role="status" data-saved="true">
      {text}
    </p>
  ) : null;
}
