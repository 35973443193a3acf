/**
 * Settings (settings.manage): the organisation (its name, renamed here: settings/Organisation.tsx), device sync with the club's HQ (enrol, status,
 * sync now: renderer/src/sync/SyncSettings.tsx), the assistant's model key (set or clear; never
 * shown), monthly budgets with month-to-date spend, the data each model provider may be sent
 * (provider clearance: the in-app model and MCP clients, default internal only), the tools that can
 * be switched off; the users (settings/Users.tsx, user.manage), devices (settings/Devices.tsx,
 * device.manage) and reports (settings/Reports.tsx, report.generate) with their entry forms, each
 * in its own component. Roles with report.generate but not settings.manage (clinicians, analysts)
 * open this page for the Organisation and Reports cards only.
 */
import { useState } from 'react';
import type { AssistantSettingsView } from '../../../models/contract';
import {
  CLASSIFICATION_LABELS,
  CLASSIFICATIONS,
  CLEARANCE_PROVIDERS,
  clearanceUpTo,
  type Classification,
  type ClearanceProvider,
  type ProviderClearance,
} from '../../../models/classification';
import type { ErrorPayload } from '../../../models/errors';
import { hasPermission } from '../../../models/roles';
import { CallError, call } from '../bridge';
import type { EntryForm } from '../components/Form';
import { Field, FormMessages, friendlyIssue, useEntryForm } from '../components/Form';
import { ErrorNote, Page } from '../components/Page';
import { useLoad } from '../components/useLoad';
import { formatDate, numberInput } from '../format';
import { useSession } from '../store';
import { SyncSettings } from '../sync/SyncSettings';
import { DevicesSection } from './settings/Devices';
import { OrganisationSection } from './settings/Organisation';
import { ReportsSection } from './settings/Reports';
import { UsersSection } from './settings/Users';

const usd = (n: number | null) => (n === null ? 'no cap' : n.toLocaleString('en-US', { style: 'currency', currency: 'USD' }));

export function Settings() {
  const me = useSession((s) => s.me)!;
  const canUsers = hasPermission(me.role, 'user.manage');
  const canDevices = hasPermission(me.role, 'device.manage');
  const canReports = hasPermission(me.role, 'report.generate');
  const canManage = hasPermission(me.role, 'settings.manage');
  // Roles that only generate reports (clinicians, analysts) open Settings for its Reports card.
  const data = useLoad(async () => ({ assistant: canManage ? await call('settings.assistant', {}) : null }), `settings-${canManage}`);
  // The loaded settings, replaced by the server's answer after a save on this page.
  const [saved, setAssistant] = useState<AssistantSettingsView | null>(null);
  const assistant = saved ?? (data.state === 'ready' ? data.data.assistant : null);
  return (
    <Page page="settings" state={data.state} title="Settings">
      {data.state === 'error' ? <ErrorNote error={data.error} /> : null}
      <OrganisationSection />
      {canManage ? <SyncSettings /> : null}
      {assistant ? <AssistantSettings s={assistant} onChange={setAssistant} /> : null}
      {canUsers ? <UsersSection /> : null}
      {canDevices ? <DevicesSection /> : null}
      {canReports ? <ReportsSection /> : null}
    </Page>
  );
}

const PROVIDER_LABELS: Record<ClearanceProvider, string> = {
  anthropic: "Kinetix's model (Anthropic)",
  mcp: 'MCP clients (their own models)',
};

/** The most sensitive class of a clearance (it is a prefix of the class order). */
function topOf(c: ProviderClearance): Classification {
  return c[c.length - 1] ?? 'internal';
}

function AssistantSettings({ s, onChange }: { s: AssistantSettingsView; onChange(s: AssistantSettingsView): void }) {
  const [key, setKey] = useState('');
  const [cap, setCap] = useState(s.org.cap_usd === null ? '' : String(s.org.cap_usd));
  const [off, setOff] = useState<Set<string>>(() => new Set(s.tools.filter((t) => t.disabled).map((t) => t.name)));
  const [error, setError] = useState<ErrorPayload | null>(null);
  // A refused budget is told next to its field (the service names `budget_cap_usd`), not in the card's note.
  const [capError, setCapError] = useState<ErrorPayload | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [top, setTop] = useState<Record<ClearanceProvider, Classification>>(() => ({
    anthropic: topOf(s.clearance.anthropic),
    mcp: topOf(s.clearance.mcp),
  }));
  const capBase = useEntryForm('budget');
  const capIssue = capError?.issues?.find((i) => i.path === 'budget_cap_usd');
  const capForm: EntryForm = {
    ...capBase,
    state: capError ? (capError.code === 'Conflict' ? 'conflict' : 'error') : 'idle',
    error: capError,
    issueFor: (f) => (f === 'budget_cap_usd' && capIssue ? friendlyIssue(capIssue.message) : null),
  };
  async function save(
    patch: {
      api_key?: string | null;
      disabled_tools?: string[];
      budget_cap_usd?: number | null;
      provider_clearance?: Partial<Record<ClearanceProvider, Classification[]>>;
    },
    what: string,
  ) {
    const budget = patch.budget_cap_usd !== undefined;
    setError(null);
    setCapError(null);
    setSaved(null);
    try {
      // The version this page showed: a change another tab saved since is a Conflict, nothing saved.
      const next = await call('settings.updateAssistant', { ...patch, expected_version: s.version });
      onChange(next);
      setSaved(what);
      setKey('');
    } catch (e) {
      const p: ErrorPayload = e instanceof CallError ? e.payload : { code: 'Internal', message: 'Saving failed.' };
      if (budget) setCapError(p);
      else setError(p);
      if (p.code === 'Conflict') await showCurrent();
    }
  }
  /**
   * After a Conflict: the settings as stored now. The switches and the clearance show the stored
   * values (saving them again would otherwise silently undo the other change); a typed cap and key
   * are kept, with the stored cap shown next to them.
   */
  async function showCurrent() {
    try {
      const current = await call('settings.assistant', {});
      onChange(current);
      setOff(new Set(current.tools.filter((t) => t.disabled).map((t) => t.name)));
      setTop({ anthropic: topOf(current.clearance.anthropic), mcp: topOf(current.clearance.mcp) });
    } catch {
      // The conflict message stands; a reload shows the current settings.
    }
  }
  const source = {
    settings: 'stored in settings, encrypted on this device',
    env: 'taken from the ANTHROPIC_API_KEY environment variable',
    none: 'add one below (or set ANTHROPIC_API_KEY); everything else in the app works without it',
  }[s.provider.source];
  return (
    <section className="card" aria-labelledby="assistant-settings">
      <h2 id="assistant-settings">Assistant (Kinetix)</h2>
      {error ? <ErrorNote error={error} /> : null}
      {saved ? (
        <p className="ok-note" role="status">
          Saved: {saved}.
        </p>
      ) : null}
      <h3>Model key</h3>
      <p data-testid="key-status">
        Anthropic key: <strong>{s.provider.configured ? 'configured' : 'not configured'}</strong> — {source}. Model: <code>{s.model}</code>. The key is never
        shown again once saved.
      </p>
      <form
        className="filters"
        onSubmit={(e) => {
          e.preventDefault();
          if (key.trim()) void save({ api_key: key.trim() }, 'model key');
        }}
      >
        <label>
          New key
          <input type="password" autoComplete="off" value={key} onChange={(e) => setKey(e.target.value)} placeholder="sk-ant-…" />
        </label>
        <button type="submit" className="primary" disabled={!key.trim()}>
          Save key
        </button>
        {s.provider.source === 'settings' ? (
          <button type="button" onClick={() => void save({ api_key: null }, 'model key cleared')}>
            Clear stored key
          </button>
        ) : null}
      </form>
      <h3>Budgets this month</h3>
      <p className="small muted">
        Month to date since {formatDate(s.month_start)} (UTC). A run is refused before any paid call once a cap is reached; an answer already complete is never
        withheld.
      </p>
      <dl className="facts">
        <dt>Organisation cap</dt>
        <dd>{usd(s.org.cap_usd)}</dd>
        <dt>Organisation spend</dt>
        <dd data-testid="org-spend">{s.org.spend_mtd_usd === null ? 'unknown' : usd(s.org.spend_mtd_usd)}</dd>
        <dt>Your spend</dt>
        <dd>{s.my_spend_mtd_usd === null ? 'unknown' : usd(s.my_spend_mtd_usd)}</dd>
      </dl>
      {s.org.set_at_hq ? (
        // HQ holds the organisation row on an enrolled device: the cap is shown, changed at HQ (the service refuses it here).
        <p className="small muted" data-testid="budget-at-hq">
          This device syncs with HQ, which holds the organisation&apos;s monthly cap: HQ&apos;s operator changes it, and this device shows it after its next
          sync. Each user&apos;s own cap is set under Users.
        </p>
      ) : (
        <>
          {/* The org cap through settings.updateAssistant (settings.manage, checked by the service); per-user caps are set on each user account. */}
          <form
            className="filters"
            data-form="budget"
            data-state={capForm.state}
            noValidate
            onSubmit={(e) => {
              e.preventDefault();
              const c = numberInput(cap);
              if (typeof c === 'string') {
                // Not a number (a comma decimal, letters): refused here, as the service would, at the field.
                setCapError({
                  code: 'Validation',
                  message: 'The cap is not a number.',
                  issues: [{ path: 'budget_cap_usd', message: 'expected number, received string' }],
                });
                return;
              }
              void save({ budget_cap_usd: c ?? null }, cap.trim() === '' ? 'monthly budget removed' : 'monthly budget');
            }}
          >
            <Field label="Organisation monthly cap" unit="USD" name="budget_cap_usd" form={capForm} hint="Empty for no cap">
              <input type="text" inputMode="decimal" value={cap} onChange={(e) => setCap(e.target.value)} placeholder="no cap" data-testid="budget-cap" />
            </Field>
            <button type="submit" className="primary">
              Save budget
            </button>
          </form>
          <FormMessages form={capForm} />
        </>
      )}
      <h3>Data the assistant may see</h3>
      <p className="small muted">
        What each model provider may be sent. By default only internal data (ids, labels, workload figures, fees) leaves this device: names and health data are
        personal and special-category data, so a provider sees them only once you have cleared it (for example under a data processing agreement with it).
        Clearing a class clears every less sensitive one. A field the provider is not cleared for reaches it as &quot;[withheld: class — provider not
        cleared]&quot;, and the assistant tells the user it cannot see it.
      </p>
      <form
        className="filters"
        data-form="clearance"
        onSubmit={(e) => {
          e.preventDefault();
          void save({ provider_clearance: { anthropic: [...clearanceUpTo(top.anthropic)], mcp: [...clearanceUpTo(top.mcp)] } }, 'data clearance');
        }}
      >
        {CLEARANCE_PROVIDERS.map((p) => (
          <label key={p}>
            {PROVIDER_LABELS[p]}
            <select data-clearance={p} value={top[p]} onChange={(e) => setTop((prev) => ({ ...prev, [p]: e.target.value as Classification }))}>
              {CLASSIFICATIONS.map((c) => (
                <option key={c} value={c}>
                  {c === 'internal' ? 'Internal only (default)' : `Up to ${CLASSIFICATION_LABELS[c]}`}
                </option>
              ))}
            </select>
          </label>
        ))}
        <button type="submit" className="primary">
          Save data clearance
        </button>
      </form>
      <p className="small muted" data-testid="clearance-status">
        Now: Kinetix&apos;s model is cleared for {s.clearance.anthropic.join(', ')}; MCP clients for {s.clearance.mcp.join(', ')}.
      </p>
      <h3>Tools</h3>
      <p className="small muted">
        Switch off tools the assistant should not be offered in this organisation. A switch only removes a tool: nobody is offered a tool their role lacks.
      </p>
      <fieldset className="tool-switches">
        <legend className="sr-only">Tools offered to the assistant</legend>
        {s.tools.map((t) => (
          <label key={t.name} className="check" data-tool-switch={t.name}>
            <input
              type="checkbox"
              checked={!off.has(t.name)}
              onChange={(e) =>
                setOff((prev) => {
                  const n = new Set(prev);
                  if (e.target.checked) n.delete(t.name);
                  else n.add(t.name);
                  return n;
                })
              }
            />
            {t.title} <code className="small muted">{t.name}</code> <span className="badge">{t.risk}</span>
          </label>
        ))}
      </fieldset>
      <button type="button" className="primary" onClick={() => void save({ disabled_tools: [...off] }, 'tool switches')}>
        Save tool switches
      </button>
    </section>
  );
}
