/**
 * The organisation's name and monthly assistant budget on a device enrolled for sync (issue 12
 * review i12h B2), with real parts: the HQ server over a real Postgres, a device SQLite file, the
 * app's background sync and `dispatch` as the transports call it. Both live on the `organization`
 * row, which HQ sends to every device; a change written on the device had no changeset to upload
 * and was silently replaced by HQ's row. On an enrolled device the change is now refused (nothing
 * saved, the Settings page says where it is made), and HQ's operator makes it
 * (`npm run hq -- organisation`), which reaches the device at its next sync.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AssistantSettingsView } from '../../models/contract';
import { DEMO_EMAILS, DEMO_PIN } from '../../models/seed/demo';
import { deviceSyncFactory } from '../app/device-sync';
import { AppSync } from '../app/sync-runner';
import { findOrganization, findUserByEmail } from '../data/identity';
import { defaultToolRegistry } from '../kinetix/catalogue';
import { operatorSetOrganisation, parseOrganisationArgs } from '../../sync/hq';
import { useDeviceFiles } from './testing/device-files';
import { havePg, useHqStack } from './testing/hq-stack';
import { createHandlers, dispatch, type CallContext } from '../ipc/handlers';

describe('parseOrganisationArgs (npm run hq -- organisation)', () => {
  it('takes --of with a name and/or a budget (an amount or none); anything else is a usage error', () => {
    expect(parseOrganisationArgs(['--of', 'owner@x.test', '--name', 'Kestrel Vale FC'])).toEqual({
      ofEmail: 'owner@x.test',
      change: { name: 'Kestrel Vale FC' },
    });
    expect(parseOrganisationArgs(['--of=owner@x.test', '--budget-cap=none', '--data-dir', '/srv/hq'])).toEqual({
      ofEmail: 'owner@x.test',
      change: { budgetCapUsd: null },
      dataDir: '/srv/hq',
    });
    expect(parseOrganisationArgs(['--of', 'o@x.test', '--budget-cap', '99.50'])).toMatchObject({ change: { budgetCapUsd: 99.5 } });
    expect(parseOrganisationArgs(['--of', 'o@x.test', '--budget-cap', '1,000'])).toMatchObject({ error: expect.stringMatching(/amount in USD/) });
    expect(parseOrganisationArgs(['--of', 'o@x.test'])).toMatchObject({ error: expect.stringMatching(/--name NAME and\/or --budget-cap/) });
    expect(parseOrganisationArgs(['--name', 'X'])).toMatchObject({ error: expect.stringMatching(/--of EMAIL is required/) });
    expect(parseOrganisationArgs(['--of', 'o@x.test', '--plan', 'pro'])).toEqual({ error: 'unknown option --plan' });
    expect(parseOrganisationArgs(['--of'])).toEqual({ error: '--of needs a value' });
    // A following option is not a value; an option given twice is refused, not silently the last.
    expect(parseOrganisationArgs(['--of', 'o@x.test', '--name', '--budget-cap', '5'])).toEqual({ error: '--name needs a value' });
    expect(parseOrganisationArgs(['--of', 'o@x.test', '--name', 'X', '--name', 'Y'])).toEqual({ error: '--name is given twice' });
    expect(parseOrganisationArgs(['--help'])).toEqual({ help: true });
  });
});

describe.skipIf(!havePg)('organisation settings on a device enrolled for sync', () => {
  const hq = useHqStack();
  const syncs: AppSync[] = [];
  const files = useDeviceFiles('ai-org-settings-');
  afterAll(async () => {
    for (const s of syncs) await s.close();
  });

  it('refuses a rename and a budget change on the device (nothing saved); the operator changes them at HQ and the device shows them after a sync', async () => {
    const db = files.open();
    const sync = new AppSync(db, deviceSyncFactory(), { tickMs: 0, stopTimeoutMs: 1000 });
    syncs.push(sync);
    await sync.enrol({ hqUrl: hq.url, email: DEMO_EMAILS.owner, pin: DEMO_PIN, code: await hq.code(DEMO_EMAILS.owner), deviceName: 'Owner laptop' });
    await sync.syncNow();
    const handlers = createHandlers({ db, sync, tools: defaultToolRegistry() });
    const owner: CallContext = { session: { userId: findUserByEmail(db, DEMO_EMAILS.owner)!.id } };
    const orgBefore = findOrganization(db, hq.summary.orgId)!;

    // The card says the name is HQ's; a rename is refused before anything is written.
    const shown = await dispatch(handlers, owner, 'settings.organisation', {});
    expect(shown).toEqual({ ok: true, value: { id: orgBefore.id, name: orgBefore.name, version: orgBefore.version, set_at_hq: true } });
    expect(await dispatch(handlers, owner, 'settings.updateOrganisation', { name: 'Renamed Here', expected_version: orgBefore.version })).toMatchObject({
      ok: false,
      error: {
        code: 'Forbidden',
        message: expect.stringMatching(/syncs with HQ, which holds the organisation's name.*nothing was saved.*npm run hq -- organisation/),
      },
    });

    // The assistant budget likewise; the settings that stay on this device still save.
    const read = await dispatch(handlers, owner, 'settings.assistant', {});
    if (!read.ok) throw new Error(read.error.message);
    const settings = { value: read.value as AssistantSettingsView };
    expect(settings.value.org.set_at_hq).toBe(true);
    expect(
      await dispatch(handlers, owner, 'settings.updateAssistant', {
        budget_cap_usd: orgBefore.budget_cap_usd === 40 ? 41 : 40,
        expected_version: settings.value.version,
      }),
    ).toMatchObject({ ok: false, error: { code: 'Forbidden', message: expect.stringMatching(/monthly assistant budget/) } });
    expect(findOrganization(db, hq.summary.orgId)).toEqual(orgBefore);
    const tool = settings.value.tools[0]!.name;
    const off = await dispatch(handlers, owner, 'settings.updateAssistant', { disabled_tools: [tool], expected_version: settings.value.version });
    expect(off).toMatchObject({ ok: true, value: { tools: expect.arrayContaining([expect.objectContaining({ name: tool, disabled: true })]) } });

    // HQ's operator renames the club and sets its budget: the device shows both after a sync.
    const env = { DATABASE_URL: hq.db.ownerUrl, HQ_APP_DATABASE_URL: hq.db.appUrl };
    const atHq = await operatorSetOrganisation({ ofEmail: DEMO_EMAILS.owner, change: { name: '  Kestrel Vale FC ', budgetCapUsd: 75.004 }, env });
    expect(atHq).toMatchObject({ id: orgBefore.id, name: 'Kestrel Vale FC', budget_cap_usd: 75, version: orgBefore.version + 1 });
    const deadline = Date.now() + 20_000;
    while (findOrganization(db, orgBefore.id)!.version !== atHq.version && Date.now() < deadline) await sync.syncNow();
    expect(findOrganization(db, orgBefore.id)).toMatchObject({
      name: 'Kestrel Vale FC',
      budget_cap_usd: 75,
      version: atHq.version,
      updated_at: atHq.updated_at,
    });
    expect(await dispatch(handlers, owner, 'settings.organisation', {})).toMatchObject({ ok: true, value: { name: 'Kestrel Vale FC', set_at_hq: true } });

    // The operator's own mistakes: typed errors, nothing written.
    await expect(operatorSetOrganisation({ ofEmail: DEMO_EMAILS.owner, change: { name: '   ' }, env })).rejects.toMatchObject({ code: 'Validation' });
    await expect(operatorSetOrganisation({ ofEmail: DEMO_EMAILS.owner, change: { budgetCapUsd: -1 }, env })).rejects.toMatchObject({ code: 'Validation' });
    await expect(operatorSetOrganisation({ ofEmail: DEMO_EMAILS.owner, change: { budgetCapUsd: 0.004 }, env })).rejects.toMatchObject({ code: 'Validation' });
    await expect(operatorSetOrganisation({ ofEmail: DEMO_EMAILS.owner, change: { name: 'Kestrel \u202eCF elaV' }, env })).rejects.toMatchObject({
      code: 'Validation',
      message: expect.stringMatching(/plain text/),
    });
    await expect(operatorSetOrganisation({ ofEmail: 'nobody@kestrel.test', change: { name: 'X' }, env })).rejects.toMatchObject({ code: 'NotFound' });
    const [row] = await hq.query<{ name: string; version: number }>(hq.summary.orgId, 'SELECT name, version FROM organization WHERE id = $1', [orgBefore.id]);
    expect({ name: row!.name, version: Number(row!.version) }).toEqual({ name: 'Kestrel Vale FC', version: atHq.version });
  });
});
