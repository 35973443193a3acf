/**
 * Kinetix harness benchmarks (BENCHMARKS.md "Kinetix harness"):
 * 1. Harness overhead per tool call, excluding the model: an in-process provider answers
 *    instantly with many calls of a trivial read tool, so the measured interval between two
 *    consecutive handler invocations is everything the harness does for one call (snapshot
 *    lookup, zod validation, masking, argument hash, the tool-call row written before it runs,
 *    capability, events persisted and published, trace, result row update, classification and
 *    the data envelope). Target ≤ 0.5 ms median. Also with a real service read (`get_athlete`).
 * 2. Events/s through the bus with one slow subscriber (non-blocking publish, 256-event buffer):
 *    publish-only, and persist-then-publish (the harness's emit path: SQLite insert + publish).
 * Real SQLite file (WAL, synchronous=NORMAL) in a temp dir.
 */
import type { AGUIEvent } from '@ag-ui/core';
import { EventType } from '@ag-ui/core';
import { cpus, loadavg, totalmem } from 'node:os';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import * as K from '../../data/kinetix';
import { addOrg, addRecord, addUser, tempDb } from '../../testing/kinetix-fixtures';
import { EventBus, type RunEventEnvelope } from '../bus';
import { DEFAULT_CLEARANCE } from '../classification';
import { Kinetix, MAX_TOOL_CALLS_PER_RESPONSE } from '../harness';
import type { ModelProvider, ModelRequest, ModelResponse, StreamHandlers } from '../provider';
import { ToolRegistry } from '../registry';
import { defineTool } from '../tool';
import { toolFromVerb } from '../verb-tools';
import { VERBS } from '../../services';
import { planWrite, type WriteVerb } from '../../services/verb';
import { approveProposal, proposeChangeset } from '../proposals';

export interface KinetixBenchResult {
  measuredAt: string;
  machine: string;
  /** The 1-minute load average when the run started and when it ended (other jobs on the machine move the figures). */
  load: { start: number; end: number };
  toolCall: { calls: number; medianMs: number; p95Ms: number; meanMs: number; tool: string }[];
  bus: { events: number; seconds: number; eventsPerSecond: number; slowReceived: number; slowDropped: number; fastReceived: number; mode: string }[];
  /** Plan + propose (policy, row rules, two rows stored) and approve (re-checks, apply, activity, outbox) per changeset size. */
  proposals: { rows: number; iterations: number; proposeMedianMs: number; proposeP95Ms: number; approveMedianMs: number; approveP95Ms: number }[];
}

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.floor(q * (s.length - 1))))] ?? NaN;
}

/** A provider that answers at once: `batches` responses of `perBatch` calls of `tool`, then a text. */
class InstantProvider implements ModelProvider {
  readonly id = 'anthropic';
  readonly clearedFor = DEFAULT_CLEARANCE;
  private n = 0;
  constructor(
    private readonly tool: string,
    private readonly input: unknown,
    private readonly perBatch: number,
    private readonly batches: number,
  ) {}
  stream(_req: ModelRequest, h: StreamHandlers): Promise<ModelResponse> {
    const usage = { inputTokens: 1000, outputTokens: 50, cacheReadTokens: 0, cacheWriteTokens: 0 };
    h.onStart?.({ id: null, model: 'claude-sonnet-4-6', usage });
    const i = this.n++;
    if (i >= this.batches)
      return Promise.resolve({ id: null, model: 'claude-sonnet-4-6', content: [{ type: 'text', text: 'done' }], stopReason: 'end_turn', usage });
    const content = Array.from({ length: this.perBatch }, (_, k) => ({ type: 'tool_use' as const, id: `toolu_${i}_${k}`, name: this.tool, input: this.input }));
    return Promise.resolve({ id: null, model: 'claude-sonnet-4-6', content, stopReason: 'tool_use', usage });
  }
}

async function toolCallOverhead(opts: { calls: number; log: (l: string) => void }): Promise<KinetixBenchResult['toolCall']> {
  const t = tempDb('kx-bench-');
  try {
    const orgId = addOrg(t.db);
    const ownerId = addUser(t.db, orgId, { role: 'owner' });
    const userId = addUser(t.db, orgId, { role: 'physio' });
    const athleteId = addRecord(t.db, orgId, ownerId, 'owner', 'athlete', {
      name: 'Bench Athlete',
      date_of_birth: '2000-01-01',
      sex: 'female',
      position: null,
      squad_id: null,
      dominant_side: 'right',
      status: 'active',
      notes: 'Some notes about the athlete.',
    });
    const stamps: number[] = [];
    const trivial = defineTool({
      kind: 'read',
      name: 'bench_ping',
      title: 'Ping',
      description: 'Returns a small object.',
      permission: 'athlete.read',
      tables: ['athlete'],
      input: z.object({ n: z.number().int().optional() }).strict(),
      // A sequence number the bench sends; no stored data (an unclassified field would be refused).
      inputClasses: { n: 'internal' },
      run: () => {
        stamps.push(performance.now());
        return { ok: true, athlete: { name: 'X', notes: 'y' } };
      },
    });
    const getAthleteVerb = VERBS.get('athletes.get')!;
    const realTool = toolFromVerb(getAthleteVerb);
    const timedReal = {
      ...realTool,
      run: (ctx: Parameters<typeof trivial.run>[0], input: unknown) => {
        stamps.push(performance.now());
        return (realTool as typeof trivial).run(ctx, input as never);
      },
    };
    const out: KinetixBenchResult['toolCall'] = [];
    for (const [label, tool, input] of [
      ['trivial read tool (harness only)', trivial, { n: 1 }],
      ['get_athlete (harness + service read)', timedReal, { id: athleteId }],
    ] as const) {
      stamps.length = 0;
      const perBatch = MAX_TOOL_CALLS_PER_RESPONSE; // the per-response cap (issue 9 §4)
      const batches = Math.ceil(opts.calls / perBatch);
      const registry = new ToolRegistry([tool as typeof trivial]);
      const kx = Kinetix.open({
        db: t.db,
        tools: registry,
        env: { ANTHROPIC_API_KEY: 'sk-ant-bench-000000' },
        secretBox: null,
        log: () => {},
        providerFactory: () => new InstantProvider(tool.name, input, perBatch, batches),
        limits: { maxIterations: batches + 2, userRunsPerMinute: 1e9, orgRunsPerMinute: 1e9 },
      });
      const { runId } = kx.startRun({ userId, message: 'bench' });
      const outcome = await kx.waitForRun(runId);
      if (outcome.status !== 'completed') throw new Error(`bench run ${outcome.status}: ${outcome.error?.message}`);
      // Intervals between consecutive handler calls inside one batch = one full call of harness work.
      const gaps: number[] = [];
      for (let i = 1; i < stamps.length; i++) if (i % perBatch !== 0) gaps.push(stamps[i]! - stamps[i - 1]!);
      const calls = K.listToolCalls(t.db, runId).length;
      // Every call must have reached its handler: a refused call would make the figure meaningless.
      if (stamps.length !== calls) throw new Error(`bench: ${label}: ${calls} tool calls recorded but the handler ran ${stamps.length} times`);
      out.push({ tool: label, calls, medianMs: quantile(gaps, 0.5), p95Ms: quantile(gaps, 0.95), meanMs: gaps.reduce((a, b) => a + b, 0) / gaps.length });
      opts.log(`${label}: ${calls} calls, median ${quantile(gaps, 0.5).toFixed(3)} ms`);
    }
    return out;
  } finally {
    t.cleanup();
  }
}

async function busThroughput(opts: { events: number; persist: boolean; log: (l: string) => void }): Promise<KinetixBenchResult['bus'][number]> {
  const t = tempDb('kx-bus-');
  try {
    const bus = new EventBus();
    const runId = 'bench-run';
    let runRowReady = false;
    if (opts.persist) {
      const orgId = addOrg(t.db);
      const userId = addUser(t.db, orgId, { role: 'physio' });
      const now = new Date().toISOString();
      K.insertConversation(t.db, { id: 'bench-conv', org_id: orgId, user_id: userId, title: '', created_at: now, updated_at: now });
      K.insertRun(t.db, {
        id: runId,
        conversation_id: 'bench-conv',
        org_id: orgId,
        user_id: userId,
        status: 'running',
        model: 'm',
        page: null,
        host_pid: process.pid,
        user_snapshot_json: '{}',
        tools_json: '[]',
        request_text: '',
        iterations: 0,
        cost_usd: 0,
        error_code: null,
        error_message: null,
        started_at: now,
        finished_at: null,
        cleared_for_json: null,
      });
      runRowReady = true;
    }
    const slow = bus.subscribe(runId);
    const fast = bus.subscribe(runId);
    let slowReceived = 0;
    let fastReceived = 0;
    // The slow view reads one event per millisecond; the fast one drains everything.
    const slowLoop = (async () => {
      for await (const _ of slow) {
        slowReceived++;
        await new Promise((r) => setTimeout(r, 1));
      }
    })();
    const fastLoop = (async () => {
      for await (const _ of fast) fastReceived++;
    })();
    const t0 = performance.now();
    const chunk = 128; // below the 256 buffer, so a subscriber that keeps up loses nothing
    for (let seq = 1; seq <= opts.events; seq++) {
      const event = { type: EventType.TEXT_MESSAGE_CONTENT, messageId: 'm1', delta: 'token ', timestamp: Date.now() } as AGUIEvent;
      if (opts.persist && runRowReady)
        K.insertRunEvent(t.db, { run_id: runId, seq, type: event.type, event_json: JSON.stringify(event), created_at: new Date().toISOString() });
      const env: RunEventEnvelope = { id: String(seq), runId, seq, event };
      bus.publish(env);
      // Yield now and then so subscribers run, as the harness's awaits do.
      if (seq % chunk === 0) await new Promise((r) => setImmediate(r));
    }
    const seconds = (performance.now() - t0) / 1000;
    bus.endRun(runId);
    await fastLoop;
    await slowLoop; // drains what its buffer still holds, then ends
    const r = {
      mode: opts.persist ? 'persist (SQLite insert) + publish' : 'publish only',
      events: opts.events,
      seconds,
      eventsPerSecond: opts.events / seconds,
      slowReceived,
      slowDropped: slow.dropped,
      fastReceived,
    };
    opts.log(`bus ${r.mode}: ${Math.round(r.eventsPerSecond)} events/s, slow got ${slowReceived}, dropped ${slow.dropped}`);
    return r;
  } finally {
    t.cleanup();
  }
}

/** Propose → approve latency of `bulk_update_rates` changesets of 1, 10 and 50 rows (±5%, policy allow). */
function proposalLatency(opts: { iterations: number; log: (l: string) => void }): KinetixBenchResult['proposals'] {
  const t = tempDb('kx-prop-');
  try {
    const orgId = addOrg(t.db);
    const ownerId = addUser(t.db, orgId, { role: 'owner' });
    const physio = addUser(t.db, orgId, { role: 'physio' });
    const verb = VERBS.get('rates.bulkUpdate') as WriteVerb;
    const out: KinetixBenchResult['proposals'] = [];
    for (const rows of [1, 10, 50]) {
      const folderId = addRecord(t.db, orgId, ownerId, 'owner', 'rate_folder', { name: `Bench ${rows}` });
      for (let i = 0; i < rows; i++)
        addRecord(t.db, orgId, ownerId, 'owner', 'rate_item', {
          folder_id: folderId,
          code: `B${rows}-${i}`,
          name: `Item ${i}`,
          item_type: 'treatment',
          price_cents: 9000 + i,
        });
      const propose: number[] = [];
      const approve: number[] = [];
      for (let k = 0; k < opts.iterations; k++) {
        const t0 = performance.now();
        const { planned } = planWrite({ db: t.db, userId: physio }, verb, { folder_id: folderId, pct: k % 2 === 0 ? 5 : -5 });
        const p = proposeChangeset(t.db, { userId: physio, planned, source: 'mcp', toolName: 'bulk_update_rates', title: 'Bench', permission: 'rates.write' });
        const t1 = performance.now();
        approveProposal(t.db, { approverUserId: physio, changesetId: p.id, contentHash: p.contentHash });
        const t2 = performance.now();
        propose.push(t1 - t0);
        approve.push(t2 - t1);
      }
      out.push({
        rows,
        iterations: opts.iterations,
        proposeMedianMs: quantile(propose, 0.5),
        proposeP95Ms: quantile(propose, 0.95),
        approveMedianMs: quantile(approve, 0.5),
        approveP95Ms: quantile(approve, 0.95),
      });
      opts.log(`proposals ${rows} rows: propose ${quantile(propose, 0.5).toFixed(3)} ms, approve ${quantile(approve, 0.5).toFixed(3)} ms (median)`);
    }
    return out;
  } finally {
    t.cleanup();
  }
}

/** The figures this section held before the harness split (issue 10 §2), the baseline for "not worse than before". */
const BEFORE_SPLIT = { measuredAt: '2026-11-30', trivialMedianMs: 0.489, getAthleteMedianMs: 0.584 } as const;

/** Run the benchmarks. `quick` for smoke tests. */
export async function runKinetixBench(opts: { quick?: boolean; log?: (l: string) => void } = {}): Promise<KinetixBenchResult> {
  const log = opts.log ?? (() => {});
  const loadStart = loadavg()[0]!;
  const toolCall = await toolCallOverhead({ calls: opts.quick ? 100 : 2000, log });
  const bus = [
    await busThroughput({ events: opts.quick ? 5000 : 200_000, persist: false, log }),
    await busThroughput({ events: opts.quick ? 2000 : 50_000, persist: true, log }),
  ];
  const proposals = proposalLatency({ iterations: opts.quick ? 5 : 200, log });
  const machine = `${cpus()[0]?.model ?? 'cpu'}, ${cpus().length} cores, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${process.platform} ${process.arch}, Node ${process.version}`;
  const load = { start: Math.round(loadStart * 10) / 10, end: Math.round(loadavg()[0]! * 10) / 10 };
  return { measuredAt: new Date().toISOString().slice(0, 10), machine, load, toolCall, bus, proposals };
}

/** The "Kinetix harness" section of BENCHMARKS.md. */
export function kinetixMarkdown(r: KinetixBenchResult): string {
  const f = (n: number, d = 3) => n.toFixed(d);
  const int = (n: number) => Math.round(n).toLocaleString('en-US');
  return [
    '## Kinetix harness',
    '',
    'Harness overhead per tool call, excluding the model: an in-process provider answers at once with batches of 16 calls (the per-response cap) of one read tool; the figure is the interval between consecutive handler invocations, i.e. everything the harness does for one call (input size/depth bound, snapshot lookup, zod validation, secret masking, argument HMAC, the tool-call row written before it runs, a five-minute capability, 5 AG-UI events redacted, persisted and published, trace rows, result row update, classification filter, data envelope). The run lease (issue 9 §1) is taken once per run, not per call. Target ≤ 0.5 ms median. Bus: one slow subscriber (reads 1 event/ms, 256-event buffer) and one fast one; publish never waits. Real SQLite file (WAL, synchronous=NORMAL).',
    '',
    `Run: \`npm run bench -- kinetix\` (or \`npx tsx main/kinetix/bench/run.ts\`). Measured ${r.measuredAt} on ${r.machine}, 1-minute load average ${r.load.start} at the start and ${r.load.end} at the end. The machine is shared with other jobs (the in-memory publish-only figure moves with that load too), so compare medians of runs under similar load; p95 mostly reflects the other jobs.`,
    '',
    `Before the harness was split into stages (issue 10 §2), measured ${BEFORE_SPLIT.measuredAt} on the same kind of machine (load not recorded): median ${BEFORE_SPLIT.trivialMedianMs} ms for the trivial read tool and ${BEFORE_SPLIT.getAthleteMedianMs} ms for get_athlete.`,
    '',
    '| tool call | calls | median ms | p95 ms | mean ms |',
    '| --- | ---: | ---: | ---: | ---: |',
    ...r.toolCall.map((x) => `| ${x.tool} | ${x.calls} | ${f(x.medianMs)} | ${f(x.p95Ms)} | ${f(x.meanMs)} |`),
    '',
    '| bus | events | events/s | slow subscriber received | slow subscriber dropped | fast subscriber received |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...r.bus.map(
      (b) => `| ${b.mode} | ${int(b.events)} | ${int(b.eventsPerSecond)} | ${int(b.slowReceived)} | ${int(b.slowDropped)} | ${int(b.fastReceived)} |`,
    ),
    '',
    'Dropped live frames are not lost: every event is in `kinetix_run_event`, and `Kinetix.subscribe` fills a gap from the table.',
    '',
    'Changeset proposals (`main/kinetix/proposals.ts`), `bulk_update_rates` ±5% on a folder of N items, as an MCP client or the run would: *propose* = plan through the service verb (reads, versions) + policy engine + row rules with version checks + changeset and proposal rows stored; *approve* = approver and proposer re-read, content-hash binding, policy re-run, version-checked apply in one transaction (rows, activity, outbox, inverse) + proposal closed.',
    '',
    '| rows per changeset | iterations | propose median ms | propose p95 ms | approve median ms | approve p95 ms |',
    '| ---: | ---: | ---: | ---: | ---: | ---: |',
    ...r.proposals.map(
      (x) => `| ${x.rows} | ${x.iterations} | ${f(x.proposeMedianMs)} | ${f(x.proposeP95Ms)} | ${f(x.approveMedianMs)} | ${f(x.approveP95Ms)} |`,
    ),
    '',
  ].join('\n');
}
