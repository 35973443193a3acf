/**
 * OTLP/HTTP export against an in-process receiver (node:http on 127.0.0.1): runs, model calls,
 * tool calls, policy decisions and applies leave the process as spans, and no secret (the
 * provider key, a rotated device key, a PIN, secret-named tool arguments) appears in any export,
 * with content capture on (masked arguments) or off (no arguments at all).
 */
import { EventType } from '@ag-ui/core';
import { createServer, type Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogueTools } from '../kinetix/catalogue';
import { KINETIX_EVENTS } from '../kinetix/events';
import { ToolRegistry } from '../kinetix/registry';
import { createClinicFixture, type ClinicFixture } from '../testing/clinic-fixture';
import { testHarness } from '../testing/kinetix-fixtures';
import { connectServiceTool } from '../testing/kinetix-tools';
import { startScriptedAnthropic, type ScriptedAnthropic } from '../testing/scripted-anthropic';
import { MASK } from '../kinetix/mask';
import { initTelemetry, redactAttributes, telemetryCapturesContent, tracesEndpoint, type TelemetryHandle } from './otel';

const API_KEY = 'sk-ant-api03-SECRETKEY-do-not-export-0123456789';
const SECRETS = {
  password: 'hunter2-Pa55word!',
  api_key: 'ak_live_SECRET_abcdef123456',
  pin: '739164',
  device_api_key: 'aik_devicekey_SECRET_998877',
  secret: 'nested-SECRET-value-42',
  token: 'tok_SECRET_zyxwvu',
};

let receiver: Server;
let base = '';
const bodies: { path: string; type: string; text: string }[] = [];
let handle: TelemetryHandle | null;
let f: ClinicFixture;
let server: ScriptedAnthropic;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let buf = Buffer.concat(chunks);
      if (req.headers['content-encoding'] === 'gzip') buf = gunzipSync(buf);
      bodies.push({ path: req.url ?? '', type: String(req.headers['content-type'] ?? ''), text: buf.toString('utf8') });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{}');
    });
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
  const addr = receiver.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  handle = initTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: base, ANTHROPIC_API_KEY: API_KEY }, { simple: true });
  f = createClinicFixture();
  server = await startScriptedAnthropic();
});

afterAll(async () => {
  await handle?.shutdown();
  await server.close();
  f.close();
  await new Promise<void>((r) => receiver.close(() => r()));
});

/** Every exported span: name and attributes as a flat record. */
function exportedSpans(): { name: string; attrs: Record<string, unknown> }[] {
  const out: { name: string; attrs: Record<string, unknown> }[] = [];
  for (const b of bodies) {
    const j = JSON.parse(b.text) as {
      resourceSpans: { scopeSpans: { spans: { name: string; attributes: { key: string; value: Record<string, unknown> }[] }[] }[] }[];
    };
    for (const rs of j.resourceSpans)
      for (const ss of rs.scopeSpans)
        for (const s of ss.spans) {
          out.push({ name: s.name, attrs: Object.fromEntries(s.attributes.map((a) => [a.key, Object.values(a.value)[0]])) });
        }
  }
  return out;
}

function registry(): ToolRegistry {
  return new ToolRegistry([...catalogueTools(), connectServiceTool]);
}

describe('telemetry configuration', () => {
  it('is off without an endpoint, content capture is off by default, and secret-named attributes are masked', () => {
    expect(tracesEndpoint({})).toBeNull();
    expect(tracesEndpoint({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x:4318/' })).toBe('http://x:4318/v1/traces');
    expect(telemetryCapturesContent({})).toBe(false);
    expect(telemetryCapturesContent({ KINETIX_OTEL_CAPTURE_CONTENT: 'true' })).toBe(true);
    expect(redactAttributes({ 'x.api_key': 'abc', 'user.pin': '1234', msg: `key ${API_KEY}`, ok: 'fine' }, [])).toEqual({
      'x.api_key': MASK,
      'user.pin': MASK,
      msg: `key ${MASK}`,
      ok: 'fine',
    });
    // The same rules as every other sink (one redactor): GitHub tokens, Bearer credentials, password-like values.
    expect(redactAttributes({ msg: 'Authorization: Bearer abc123def456ghi and pwd=hunter2 ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123' }, [])).toEqual({
      msg: `Authorization: Bearer ${MASK} and pwd=${MASK} ${MASK}`,
    });
    expect(handle?.endpoint).toBe(`${base}/v1/traces`);
  });
});

describe('OTLP export to an in-process receiver', () => {
  it('exports run, model-call, tool-call, policy and apply spans, and no secret appears in any of them', async () => {
    const admin = f.a.users.admin;
    // Content capture ON for this harness: tool arguments go on spans, masked.
    const { kx } = testHarness(f.db, registry(), {
      baseURL: server.url,
      apiKey: API_KEY,
      env: { ANTHROPIC_API_KEY: API_KEY, KINETIX_OTEL_CAPTURE_CONTENT: 'true' },
    });
    server.push(
      {
        toolUses: [
          { name: 'connect_service', input: { name: 'lab', ...SECRETS, nested: { secret: SECRETS.secret, items: [{ token: SECRETS.token }] } } },
          { name: 'rotate_device_key', input: { id: f.a.deviceId } },
        ],
      },
      { text: 'Connected and rotated.' },
    );
    const { runId } = kx.startRun({ userId: admin, message: 'test the lab connection and rotate the capture device key' });
    let revealed = '';
    for await (const e of kx.subscribe(admin, runId)) {
      if (e.event.type !== EventType.CUSTOM) continue;
      const ev = e.event as { name: string; value: { toolCallId: string; argsHash: string; contentHash: string; values?: Record<string, string> } };
      if (ev.name === KINETIX_EVENTS.confirmRequired)
        kx.confirm(admin, ev.value.toolCallId, { approve: true, argsHash: ev.value.argsHash, contentHash: ev.value.contentHash });
      if (ev.name === KINETIX_EVENTS.reveal) revealed = ev.value.values!.api_key!;
    }
    expect((await kx.waitForRun(runId)).status).toBe('completed');
    expect(revealed).toMatch(/^aik_/);
    await handle!.forceFlush();

    expect(bodies.length).toBeGreaterThan(0);
    expect(bodies.every((b) => b.path === '/v1/traces' && b.type.includes('json'))).toBe(true);
    const spans = exportedSpans().filter((s) => s.attrs['kinetix.run_id'] === runId);
    const names = new Set(spans.map((s) => s.name));
    for (const n of ['kinetix.run', 'kinetix.model_call', 'kinetix.tool_call', 'kinetix.policy', 'kinetix.apply']) expect(names, n).toContain(n);
    expect(spans.find((s) => s.name === 'kinetix.policy')!.attrs).toMatchObject({ 'kinetix.policy.verdict': 'allow', 'kinetix.tool': 'rotate_device_key' });
    const connect = spans.find((s) => s.name === 'kinetix.tool_call' && s.attrs['kinetix.tool'] === 'connect_service')!;
    expect(String(connect.attrs['kinetix.tool.args'])).toContain('"name":"lab"'); // captured, masked

    const all = bodies.map((b) => b.text).join('\n');
    for (const [k, v] of Object.entries({ API_KEY, ...SECRETS, revealed })) expect(all.includes(v), `${k} leaked into an exported span`).toBe(false);
  });

  it('with content capture off (the default) tool arguments are not on spans at all', async () => {
    const physio = f.a.users.physio;
    const { kx } = testHarness(f.db, registry(), { baseURL: server.url, apiKey: API_KEY, env: { ANTHROPIC_API_KEY: API_KEY } });
    server.push(
      { toolUses: [{ name: 'connect_service', input: { name: 'lab2', ...SECRETS, nested: { secret: SECRETS.secret, items: [] } } }] },
      { text: 'ok' },
    );
    const { runId } = kx.startRun({ userId: physio, message: 'test lab2' });
    await kx.waitForRun(runId);
    await handle!.forceFlush();
    const spans = exportedSpans().filter((s) => s.attrs['kinetix.run_id'] === runId);
    expect(spans.some((s) => s.name === 'kinetix.tool_call')).toBe(true);
    expect(spans.some((s) => 'kinetix.tool.args' in s.attrs)).toBe(false);
    const all = bodies.map((b) => b.text).join('\n');
    expect(all).not.toContain('lab2');
    for (const v of [API_KEY, ...Object.values(SECRETS)]) expect(all.includes(v)).toBe(false);
  });
});
