/**
 * The shape service: Electric-compatible shapes over any table with a primary key, fed by logical
 * replication, with logs persisted on disk.
 *
 * How a shape stays consistent (the approach Electric takes):
 * 1. The shape is registered with the change dispatcher *before* its snapshot is taken, so every
 *    transaction decoded from then on is queued for it.
 * 2. The snapshot is a REPEATABLE READ query that also records `pg_current_snapshot()`.
 * 3. A replicated transaction is applied to the shape only if it is *not* visible in that snapshot
 *    (its rows are already in the snapshot otherwise); transactions replayed after a restart that
 *    the shape has already logged are skipped by commit LSN.
 * 4. Rows move in and out of a `where` shape on update: membership is tracked by row key, and the
 *    new row is tested with the same compiled `where`, evaluated by Postgres on the row's values
 *    (`json_populate_recordset`), so live filtering and the snapshot cannot disagree.
 *
 * What invalidates a shape (clients then get 409 must-refetch with a new handle, never a gap):
 * `DELETE /v1/shape`, TRUNCATE of its table, a change to its table's columns, a missing or
 * re-created replication slot, or a log on disk that cannot be read.
 *
 * Privileges at run time: a role with REPLICATION and SELECT on the shaped tables (plus BYPASSRLS or
 * a permissive policy where tables force row-level security, since the snapshot is a plain SELECT).
 * The publication (`FOR ALL TABLES`, so tables created later are covered) is created by an
 * administrator; the service creates it itself only when its role is allowed to (e.g. a superuser
 * in tests) and otherwise says what to run.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { AppError } from '../../models/errors';
import type { Pgoutput } from 'pg-logical-replication';
import { compareOffsets, formatOffset, ShapeLog, ShapeLogError, type Offset } from './log';
import { OUTPUT_SETTINGS, ReplicationStream, type RowChange, type TextRow, type Transaction } from './replication';
import { columnSchema, loadTable, parseColumnList, parseTableName, rowKey, TableError, type TableInfo } from './schema';
import { MemberKeys } from './members';
import { compileWhere, quoteIdent, type CompiledWhere } from './where';

/** Configuration of a `ShapeService`. */
export interface ShapeServiceOptions {
  /** Postgres URL of a role with REPLICATION + SELECT (or an admin, in tests). */
  databaseUrl: string;
  /** Directory for shape logs and the service's state (created if missing). */
  storageDir: string;
  /** Logical replication slot name (default `ai_shapes`). */
  slot?: string;
  /** Publication name (default `ai_shapes`; must be, or is created as, FOR ALL TABLES). */
  publication?: string;
  /** Largest response body built from a log, in bytes of JSON (default 4 MiB; Electric chunks at ~10 MB). */
  chunkBytes?: number;
  /** How long a `live` request is held before answering up-to-date with no changes, ms (default 20 000, as Electric). */
  longPollTimeoutMs?: number;
  /**
   * Most bytes of JSON that changes may add to a shape's log after its snapshot (default 256 MiB). A log that grows past it is dropped
   * and its clients refetch a fresh snapshot (which is compact): logs are never silently truncated.
   */
  maxLogBytes?: number;
  /**
   * Drop a shape no request has named (by definition or handle) for this long, ms; also at start,
   * so a restart resumes only shapes in use (`lastRequestedAt` in its meta.json). A client that
   * comes back later gets 409 must-refetch and a fresh snapshot. Default: never (null).
   */
  idleShapeMs?: number | null;
  /**
   * Most bytes of memory all shapes together may take (default 512 MiB): each shape's log index
   * (24 bytes a message) and membership (~32 bytes a row); the messages themselves are on disk.
   * Past it, the shapes requested longest ago are dropped (their clients get 409 must-refetch and a
   * fresh snapshot), those held by a live request last; a shape larger than the whole budget is
   * refused ({@link ShapeTooLargeError}).
   */
  maxMemoryBytes?: number;
  /** Log lines (default: none). */
  log?: (line: string) => void;
}

/** What stopped the shape service from starting (see {@link ShapeServiceError}). */
export type ShapeServiceErrorKind = 'wal_level' | 'publication_missing' | 'slot_in_use' | 'replication_privilege' | 'connect';

/**
 * A service-level failure at start, an {@link AppError} with a message that says what to do;
 * `kind` says which: `NotConfigured` (503) when Postgres or the role is not set up for it
 * (`wal_level`, `publication_missing`, `replication_privilege`), `Conflict` (409) when another
 * process holds the replication slot (`slot_in_use`), `Unavailable` (503) when Postgres cannot
 * be reached (`connect`).
 */
export class ShapeServiceError extends AppError {
  constructor(
    readonly kind: ShapeServiceErrorKind,
    message: string,
  ) {
    super({ code: kind === 'connect' ? 'Unavailable' : kind === 'slot_in_use' ? 'Conflict' : 'NotConfigured', message, kind });
    this.name = 'ShapeServiceError';
  }
}

/** The `kind` of {@link ShapeTooLargeError}, also in its 503 body (`{message, kind}`) for HQ's proxy. */
export const SHAPE_TOO_LARGE = 'shape_too_large';

/**
 * A shape whose rows alone need more memory than the service's whole budget
 * ({@link ShapeServiceOptions.maxMemoryBytes}); `Unavailable` (503), kind {@link SHAPE_TOO_LARGE}.
 * Nothing is kept of it.
 */
export class ShapeTooLargeError extends AppError {
  constructor(
    readonly shapeBytes: number,
    readonly budgetBytes: number,
  ) {
    const mb = (b: number): string => (b / 1048576).toFixed(1);
    super({
      code: 'Unavailable',
      kind: SHAPE_TOO_LARGE,
      message: `This shape needs ${mb(shapeBytes)} MB of the shape service's memory, more than its whole budget of ${mb(budgetBytes)} MB. Narrow it with a where clause, or raise the budget (SHAPE_MAX_MEMORY_MB).`,
    });
    this.name = 'ShapeTooLargeError';
  }
}

/** A shape request's definition, as given by a client (validated by `resolveDefinition`). */
export interface ShapeRequest {
  table: string;
  where?: string | undefined;
  params?: Record<string, string>;
  columns?: string | undefined;
  replica?: string | undefined;
}

interface Definition {
  schema: string;
  table: string;
  where: string | null;
  params: Record<string, string>;
  /** Selected columns (null: all). */
  columns: string[] | null;
  replica: 'default' | 'full';
}

interface Snapshot {
  xmin: bigint;
  xmax: bigint;
  xip: bigint[];
}

interface ShapeMeta {
  version: 1;
  handle: string;
  def: Definition;
  /** Column names + types the shape was built against (a change invalidates the shape). */
  signature: string;
  snapshot: { xmin: string; xmax: string; xip: string[] };
  /** Commit LSN of the last transaction applied (decimal). */
  lastLsn: string;
  createdAt: string;
  /** When a request last named the shape (ISO-8601; absent in logs written before idle eviction: then `createdAt`). */
  lastRequestedAt?: string;
}

const FORMAT_VERSION = 1;
const SNAPSHOT_BATCH = 5000;

/** One shape: its definition, log, membership and waiting long-polls. */
export class Shape {
  readonly log: ShapeLog;
  /** Keys of the rows currently in the shape. */
  readonly keys = new MemberKeys();
  readonly selected: string[];
  readonly schemaHeader: string;
  readonly where: CompiledWhere | null;
  lastLsn = 0n;
  snapshot: Snapshot | null = null;
  deleted = false;
  /** True once the shape is served: its creation finished, or it was resumed from disk. */
  created = false;
  /** Resolves when the snapshot is in the log (rejects if it failed). */
  ready: Promise<void>;
  private queue: Promise<void>;
  private waiters = new Set<() => void>();
  /** Transactions queued but not yet applied (the dispatcher does not acknowledge past these). */
  pending = 0;
  metaDirty = false;
  /** Bytes of the snapshot part of the log (the limit applies to what changes add after it). */
  snapshotBytes = 0;
  /** When a request last named this shape (ms since the epoch; idle eviction). */
  lastRequestedAt = Date.now();
  /** When the shape was created (ISO-8601). */
  createdAt = new Date().toISOString();
  /** `lastRequestedAt` as last written to meta.json. */
  persistedRequestedAt = 0;

  /** Note a request for this shape at `now` (ms); meta.json is rewritten at most once a minute for it. */
  touch(now = Date.now()): void {
    this.lastRequestedAt = now;
    if (now - this.persistedRequestedAt > 60_000) this.metaDirty = true;
  }

  constructor(
    readonly handle: string,
    readonly defKey: string,
    readonly def: Definition,
    readonly table: TableInfo,
    readonly dir: string,
  ) {
    this.log = new ShapeLog(dir);
    const cols = new Set(table.columns.map((c) => c.name));
    this.selected = def.columns ?? table.columns.map((c) => c.name);
    this.where = def.where ? compileWhere(def.where, cols, def.params) : null;
    const schema: Record<string, unknown> = {};
    for (const c of table.columns) if (this.selected.includes(c.name)) schema[c.name] = columnSchema(c);
    this.schemaHeader = JSON.stringify(schema);
    this.ready = Promise.resolve();
    this.queue = Promise.resolve();
  }

  /** Run `fn` after everything queued before it (snapshot, earlier transactions). */
  enqueue(fn: () => Promise<void>): Promise<void> {
    const p = this.queue.then(fn);
    this.queue = p.catch(() => undefined);
    return p;
  }

  /** Wait until the log grows, the shape is deleted, `ms` pass or `signal` aborts. */
  waitForChange(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((res) => {
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(done);
        signal?.removeEventListener('abort', done);
        res();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  get waiting(): number {
    return this.waiters.size;
  }

  notify(): void {
    for (const w of [...this.waiters]) w();
  }

  /** Bytes of memory the shape takes: its log's index and its membership (messages are on disk). */
  get memoryBytes(): number {
    return this.log.indexBytes + this.keys.bytes;
  }

  /** Offset of the end of the log. */
  get end(): Offset {
    return this.log.last ?? { tx: 0n, op: 0 };
  }
}

function tableSignature(t: { columns: { name: string; type: string; dims: number }[]; pk: string[] }): string {
  return JSON.stringify([t.columns.map((c) => [c.name, c.type, c.dims]), t.pk]);
}

function parseSnapshot(text: string): Snapshot {
  const [xmin, xmax, xip] = text.split(':');
  return { xmin: BigInt(xmin!), xmax: BigInt(xmax!), xip: xip ? xip.split(',').filter(Boolean).map(BigInt) : [] };
}

/** Widen a 32-bit xid from the replication stream to the 64-bit epoch of `ref`. */
function widenXid(xid: number, ref: bigint): bigint {
  const epoch = ref >> 32n;
  let x = (epoch << 32n) | BigInt(xid >>> 0);
  if (x > ref + 0x80000000n) x -= 0x100000000n;
  else if (x < ref - 0x80000000n) x += 0x100000000n;
  return x;
}

function visibleIn(snap: Snapshot, xid: number): boolean {
  const x = widenXid(xid, snap.xmax);
  return x < snap.xmin || (x < snap.xmax && !snap.xip.includes(x));
}

function pick(row: TextRow, cols: string[]): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const c of cols) {
    const v = row[c];
    if (v !== undefined) out[c] = v;
  }
  return out;
}

/** Handle: `<hash of definition>-<creation time in µs>`, as Electric's. Digits and one dash only. */
function makeHandle(defKey: string): string {
  const h = createHash('sha256').update(defKey).digest().readUInt32BE(0);
  const us = BigInt(Date.now()) * 1000n + BigInt(randomBytes(2).readUInt16BE(0) % 1000);
  return `${h}-${us}`;
}

/** True when `s` could be a handle (used before touching the file system with it). */
export function isHandle(s: string): boolean {
  return /^\d{1,10}-\d{1,20}$/.test(s);
}

/** The running service. Create with `ShapeService.start`. */
export class ShapeService {
  private readonly pool: pg.Pool;
  private readonly byHandle = new Map<string, Shape>();
  private readonly byDef = new Map<string, Promise<Shape>>();
  private stream: ReplicationStream | null = null;
  private flushTimer: NodeJS.Timeout | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** {@link ShapeServiceOptions.idleShapeMs}. */
  readonly idleShapeMs: number | null;
  private relations = new Map<string, string>(); // "schema.table" → signature seen on the stream
  /** Everything up to here is applied to every shape (commit end LSN or an idle keepalive's LSN). */
  private processedLsn = 0n;
  private ackedLsn = 0n;
  private stopped = false;
  private restarting = false;
  readonly slot: string;
  readonly publication: string;
  readonly chunkBytes: number;
  readonly longPollTimeoutMs: number;
  readonly maxLogBytes: number;
  private readonly log: (line: string) => void;
  /** See {@link ShapeServiceOptions.maxMemoryBytes}. */
  readonly maxMemoryBytes: number;
  /** Last replication error (null while healthy). */
  lastError: Error | null = null;

  private constructor(readonly options: ShapeServiceOptions) {
    this.slot = options.slot ?? 'ai_shapes';
    this.publication = options.publication ?? 'ai_shapes';
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(this.slot)) throw new Error(`shape service: bad slot name ${this.slot}`);
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(this.publication)) throw new Error(`shape service: bad publication name ${this.publication}`);
    this.chunkBytes = options.chunkBytes ?? 4 * 1024 * 1024;
    this.longPollTimeoutMs = options.longPollTimeoutMs ?? 20_000;
    this.maxLogBytes = options.maxLogBytes ?? 256 * 1024 * 1024;
    this.idleShapeMs = options.idleShapeMs ?? null;
    this.maxMemoryBytes = options.maxMemoryBytes ?? 512 * 1024 * 1024;
    this.log = options.log ?? (() => undefined);
    this.pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: 6,
      options: Object.entries(OUTPUT_SETTINGS)
        .map(([k, v]) => `-c ${k}=${v.replace(/ /g, '\\ ')}`)
        .join(' '),
    });
    this.pool.on('error', (e) => this.log(`shape service: idle connection error: ${e.message}`));
  }

  /**
   * Connect, check `wal_level`, ensure the publication and slot, load persisted shapes (dropping
   * those that cannot be continued) and start streaming changes.
   * @throws ShapeServiceError with what to fix.
   */
  static async start(options: ShapeServiceOptions): Promise<ShapeService> {
    const svc = new ShapeService(options);
    try {
      await svc.init();
    } catch (e) {
      await svc.stop().catch(() => undefined);
      throw e;
    }
    return svc;
  }

  get storageDir(): string {
    return this.options.storageDir;
  }

  /** True once `stop()` has been called (held responses end). */
  get isStopped(): boolean {
    return this.stopped;
  }

  /** True while the replication stream is connected. */
  get healthy(): boolean {
    return !!this.stream?.connected && !this.stopped;
  }

  /**
   * Number of shapes, live requests held, the processed WAL position, and the memory the shapes'
   * indexes take (bytes: the logs' offset indexes plus the row keys of each shape's membership; the
   * messages themselves are on disk).
   */
  stats(): { shapes: number; waiting: number; processedLsn: string; memoryBytes: number; memberKeys: number } {
    let waiting = 0;
    let memoryBytes = 0;
    let memberKeys = 0;
    for (const s of this.byHandle.values()) {
      waiting += s.waiting;
      memoryBytes += s.memoryBytes;
      memberKeys += s.keys.size;
    }
    return { shapes: this.byHandle.size, waiting, processedLsn: this.processedLsn.toString(), memoryBytes, memberKeys };
  }

  /**
   * Keep the shapes' memory within {@link maxMemoryBytes}: drop the shapes requested longest ago
   * (those held by a live request last; never `keep`, nor one still being created) until the
   * total fits. @returns the handles dropped
   */
  async enforceMemoryBudget(keep: Shape | null = null): Promise<string[]> {
    let total = 0;
    for (const s of this.byHandle.values()) total += s.memoryBytes;
    if (total <= this.maxMemoryBytes) return [];
    const candidates = [...this.byHandle.values()]
      .filter((s) => s !== keep && s.created && !s.deleted)
      .sort((a, b) => Number(a.waiting > 0) - Number(b.waiting > 0) || a.lastRequestedAt - b.lastRequestedAt);
    const out: string[] = [];
    for (const s of candidates) {
      if (total <= this.maxMemoryBytes) break;
      total -= s.memoryBytes;
      await this.deleteShape(s);
      out.push(s.handle);
    }
    if (out.length)
      this.log(
        `shape service: dropped ${out.length} least recently requested shape(s) to stay within ${Math.round(this.maxMemoryBytes / 1048576)} MB of memory`,
      );
    return out;
  }

  /**
   * Up to `maxBytes` (default {@link chunkBytes}) of a shape's messages after `after` (null: from the start), read from
   * its log on disk. A log that cannot be read (its file cut or removed outside the service) drops
   * the shape, as a log unreadable at start does: the result is empty and `shape.deleted` is true,
   * so the caller answers 409 must-refetch and the client takes a fresh snapshot.
   */
  readLog(shape: Shape, after: Offset | null, maxBytes = this.chunkBytes): { messages: string[]; last: Offset | null; complete: boolean } {
    try {
      return shape.log.read(after, maxBytes);
    } catch (e) {
      if (!(e instanceof ShapeLogError) && !(e as NodeJS.ErrnoException).code) throw e;
      this.log(`shape service: shape ${shape.handle} log cannot be read (${(e as Error).message}); invalidating it`);
      void this.deleteShape(shape); // marks it deleted before its first await
      return { messages: [], last: null, complete: true };
    }
  }

  private async init(): Promise<void> {
    let wal: string;
    try {
      wal = (await this.pool.query<{ w: string }>(`SELECT current_setting('wal_level') AS w`)).rows[0]!.w;
    } catch (e) {
      throw new ShapeServiceError('connect', `shape service: cannot connect to Postgres (${(e as Error).message}). Check --database-url.`);
    }
    if (wal !== 'logical')
      throw new ShapeServiceError('wal_level', `shape service: Postgres has wal_level=${wal}; set wal_level=logical in postgresql.conf and restart Postgres.`);
    const role = (
      await this.pool.query<{ rolreplication: boolean; rolsuper: boolean }>(`SELECT rolreplication, rolsuper FROM pg_roles WHERE rolname = current_user`)
    ).rows[0];
    if (!role?.rolreplication && !role?.rolsuper) {
      throw new ShapeServiceError(
        'replication_privilege',
        'shape service: the database role lacks the REPLICATION attribute (ALTER ROLE … WITH REPLICATION, as an administrator).',
      );
    }
    await this.ensurePublication();

    mkdirSync(join(this.storageDir, 'shapes'), { recursive: true });
    const statePath = join(this.storageDir, 'state.json');
    const state = existsSync(statePath)
      ? (JSON.parse(readFileSync(statePath, 'utf8')) as { version: number; slot: string; processedLsn: string; systemId: string; db: string })
      : null;
    const ident = (
      await this.pool.query<{ sys: string; db: string }>(`SELECT (SELECT system_identifier::text FROM pg_control_system()) AS sys, current_database() AS db`)
    ).rows[0]!;

    const slotRow = (
      await this.pool.query<{ confirmed: string | null; active: boolean; plugin: string }>(
        `SELECT confirmed_flush_lsn::text AS confirmed, active, plugin FROM pg_replication_slots WHERE slot_name = $1 AND database = current_database()`,
        [this.slot],
      )
    ).rows[0];
    let keepShapes =
      !!state && state.version === FORMAT_VERSION && state.slot === this.slot && state.systemId === ident.sys && state.db === ident.db && !!slotRow;
    if (slotRow?.active)
      throw new ShapeServiceError(
        'slot_in_use',
        `shape service: replication slot ${this.slot} is in use by another process (is another shape service running on this database?).`,
      );
    if (slotRow && slotRow.plugin !== 'pgoutput')
      throw new ShapeServiceError(
        'slot_in_use',
        `shape service: replication slot ${this.slot} uses plugin ${slotRow.plugin}, not pgoutput; choose another --slot.`,
      );
    if (!slotRow) {
      await this.pool.query(`SELECT pg_create_logical_replication_slot($1, 'pgoutput')`, [this.slot]);
      this.log(`shape service: created replication slot ${this.slot}`);
    } else if (keepShapes && slotRow.confirmed) {
      const confirmed = (await this.pool.query<{ n: string }>(`SELECT ($1::pg_lsn - '0/0'::pg_lsn)::text AS n`, [slotRow.confirmed])).rows[0]!.n;
      // Acknowledged past what we persisted: something else consumed the slot; the logs may have a gap.
      if (BigInt(confirmed.split('.')[0]!) > BigInt(state!.processedLsn) + 1n) keepShapes = false;
    }
    this.processedLsn = keepShapes ? BigInt(state!.processedLsn) : 0n;
    this.ackedLsn = this.processedLsn;

    const shapesDir = join(this.storageDir, 'shapes');
    for (const handle of readdirSync(shapesDir)) {
      const dir = join(shapesDir, handle);
      if (!keepShapes || !isHandle(handle)) {
        rmSync(dir, { recursive: true, force: true });
        continue;
      }
      try {
        const meta = JSON.parse(readFileSync(join(dir, 'meta.json'), 'utf8')) as ShapeMeta;
        const requestedAt = Date.parse(meta.lastRequestedAt ?? meta.createdAt);
        if (this.idleShapeMs !== null && !(Date.now() - requestedAt <= this.idleShapeMs)) {
          this.log(`shape service: not resuming shape ${handle}: no request for it since ${meta.lastRequestedAt ?? meta.createdAt}`);
          rmSync(dir, { recursive: true, force: true });
          continue;
        }
        const table = await loadTable(this.pool, meta.def.schema, meta.def.table);
        if (tableSignature(table) !== meta.signature) throw new Error('table changed while the service was down');
        const defKey = JSON.stringify(meta.def);
        const shape = new Shape(handle, defKey, meta.def, table, dir);
        shape.snapshot = { xmin: BigInt(meta.snapshot.xmin), xmax: BigInt(meta.snapshot.xmax), xip: meta.snapshot.xip.map(BigInt) };
        shape.lastLsn = BigInt(meta.lastLsn);
        shape.createdAt = meta.createdAt;
        shape.lastRequestedAt = shape.persistedRequestedAt = requestedAt;
        if (shape.log.length === 0) throw new Error('empty log');
        shape.snapshotBytes = shape.log.snapshotSize();
        for (const json of shape.log.messages()) {
          const m = JSON.parse(json) as { key?: string; headers: { operation?: string } };
          if (m.key === undefined) continue;
          if (m.headers.operation === 'delete') shape.keys.delete(m.key);
          else shape.keys.add(m.key);
        }
        // Entries logged after the last meta write are replayed from the slot: trust the log's end.
        const end = shape.log.last!;
        if (end.tx > shape.lastLsn) shape.lastLsn = end.tx;
        shape.created = true;
        this.byHandle.set(handle, shape);
        this.byDef.set(defKey, Promise.resolve(shape));
      } catch (e) {
        this.log(`shape service: dropping shape ${handle} (${(e as Error).message}); its clients will refetch`);
        rmSync(dir, { recursive: true, force: true });
      }
    }
    this.writeState(ident);
    await this.enforceMemoryBudget(); // a restart with a smaller budget resumes only what fits
    await this.startStream();
    this.flushTimer = setInterval(() => void this.flush().catch((e: Error) => this.log(`shape service: flush failed: ${e.message}`)), 1000);
    this.flushTimer.unref();
    if (this.idleShapeMs !== null) {
      this.idleTimer = setInterval(
        () => void this.evictIdle().catch((e: Error) => this.log(`shape service: idle eviction failed: ${e.message}`)),
        Math.min(60_000, Math.max(1000, this.idleShapeMs / 4)),
      );
      this.idleTimer.unref();
    }
    this.log(`shape service: ${this.byHandle.size} shape(s) resumed, streaming from slot ${this.slot}`);
  }

  private stateIdent: { sys: string; db: string } | null = null;
  private writeState(ident?: { sys: string; db: string }): void {
    if (ident) this.stateIdent = ident;
    if (!this.stateIdent) return;
    const path = join(this.storageDir, 'state.json');
    writeFileSync(
      path + '.tmp',
      JSON.stringify({
        version: FORMAT_VERSION,
        slot: this.slot,
        processedLsn: this.processedLsn.toString(),
        systemId: this.stateIdent.sys,
        db: this.stateIdent.db,
      }),
    );
    renameSync(path + '.tmp', path);
  }

  private async ensurePublication(): Promise<void> {
    const pub = (await this.pool.query<{ all: boolean }>(`SELECT puballtables AS all FROM pg_publication WHERE pubname = $1`, [this.publication])).rows[0];
    if (pub) {
      if (!pub.all) this.log(`shape service: publication ${this.publication} is not FOR ALL TABLES; tables outside it get no live changes`);
      return;
    }
    try {
      await this.pool.query(`CREATE PUBLICATION ${quoteIdent(this.publication)} FOR ALL TABLES`);
      this.log(`shape service: created publication ${this.publication} FOR ALL TABLES`);
    } catch (e) {
      throw new ShapeServiceError(
        'publication_missing',
        `shape service: publication ${this.publication} does not exist and this role cannot create it (${(e as Error).message}). ` +
          `An administrator must run: CREATE PUBLICATION ${quoteIdent(this.publication)} FOR ALL TABLES;`,
      );
    }
  }

  private async startStream(): Promise<void> {
    const stream = new ReplicationStream(this.options.databaseUrl, this.slot, this.publication, {
      onTransaction: (tx) => this.onTransaction(tx),
      onRelation: (rel) => this.onRelation(rel),
      onIdle: (lsn) => {
        if (lsn > this.processedLsn && ![...this.byHandle.values()].some((s) => s.pending > 0)) this.processedLsn = lsn;
      },
      onError: (e) => this.onStreamError(e),
    });
    this.stream = stream;
    try {
      await stream.start();
      this.lastError = null;
    } catch (e) {
      const msg = (e as Error).message;
      if (/is active for PID/.test(msg))
        throw new ShapeServiceError('slot_in_use', `shape service: replication slot ${this.slot} is in use by another process.`);
      throw e;
    }
  }

  private onStreamError(e: Error): void {
    this.lastError = e;
    this.log(`shape service: replication error: ${e.message}; reconnecting`);
    if (this.stopped || this.restarting) return;
    this.restarting = true;
    const old = this.stream;
    void (async () => {
      await old?.stop().catch(() => undefined);
      for (let attempt = 0; !this.stopped; attempt++) {
        await new Promise((r) => setTimeout(r, Math.min(10_000, 250 * 2 ** attempt)));
        if (this.stopped) break;
        try {
          await this.flush();
          await this.startStream();
          break;
        } catch (err) {
          this.lastError = err as Error;
          this.log(`shape service: reconnect failed: ${(err as Error).message}`);
        }
      }
      this.restarting = false;
    })();
  }

  private async onRelation(rel: Pgoutput.MessageRelation): Promise<void> {
    const name = `${rel.schema}.${rel.name}`;
    this.tableCache.delete(name);
    const shapes = [...this.byHandle.values()].filter((s) => s.def.schema === rel.schema && s.def.table === rel.name);
    const seen = this.relations.get(name);
    // The stream re-sends a relation on each connection and after each ALTER; compare with the catalog.
    if (shapes.length === 0) return;
    const table = await loadTable(this.pool, rel.schema, rel.name).catch(() => null);
    const sig = table ? tableSignature(table) : 'gone';
    this.relations.set(name, sig);
    if (seen === sig) return;
    for (const s of shapes) {
      if (tableSignature(s.table) !== sig) {
        this.log(`shape service: ${name} changed (columns or key); invalidating shape ${s.handle}`);
        await this.deleteShape(s);
      }
    }
  }

  /**
   * Transactions dispatched in the last ~2 s. A transaction is decoded once its commit record is
   * flushed, which can be a moment before it leaves the proc array; a snapshot taken in that moment
   * does not see it although it was dispatched before the shape registered. Such a transaction is
   * applied from here after the snapshot (the visibility test decides).
   */
  private recent: { tx: Transaction; at: number; size: number }[] = [];
  private recentSize = 0;

  private remember(tx: Transaction): void {
    const now = Date.now();
    this.recent.push({ tx, at: now, size: tx.changes.length });
    this.recentSize += tx.changes.length;
    while (this.recent.length > 0 && (this.recent[0]!.at < now - 2000 || this.recentSize > 20_000)) this.recentSize -= this.recent.shift()!.size;
  }

  private async onTransaction(tx: Transaction): Promise<void> {
    this.remember(tx);
    const touched = new Set<string>();
    for (const c of tx.changes) {
      if (c.op === 'truncate') for (const r of c.relations) touched.add(`${r.schema}.${r.name}`);
      else touched.add(`${c.relation.schema}.${c.relation.name}`);
    }
    const waits: Promise<void>[] = [];
    for (const shape of this.byHandle.values()) {
      if (!touched.has(`${shape.def.schema}.${shape.def.table}`)) continue;
      shape.pending++;
      const p = shape
        .enqueue(() => this.applyTransaction(shape, tx))
        .catch(async (e: Error) => {
          // A transaction the shape could not apply would be a silent gap: drop the shape instead,
          // so its clients refetch.
          this.log(`shape service: shape ${shape.handle} could not apply a transaction (${e.message}); invalidating it`);
          await this.deleteShape(shape);
        })
        .finally(() => shape.pending--);
      // A shape still taking its snapshot gets the transaction queued; others are applied in order now.
      if (shape.snapshot) waits.push(p);
    }
    await Promise.all(waits);
    if (waits.length > 0) await this.enforceMemoryBudget();
    if (![...this.byHandle.values()].some((s) => s.pending > 0)) this.processedLsn = tx.endLsn;
  }

  /** Evaluate the shape's where on rows (by Postgres, with the table's column types). */
  private async matches(shape: Shape, rows: TextRow[]): Promise<boolean[]> {
    if (!shape.where) return rows.map(() => true);
    if (rows.length === 0) return [];
    const w = shape.where;
    const rel = `${quoteIdent(shape.def.schema)}.${quoteIdent(shape.def.table)}`;
    const res = await this.pool.query<{ m: boolean | null }>(
      `SELECT (${w.sql}) AS m FROM json_populate_recordset(NULL::${rel}, $${w.values.length + 1}::json) WITH ORDINALITY AS r ORDER BY r.ordinality`,
      [...w.values, JSON.stringify(rows)],
    );
    return res.rows.map((r) => r.m === true);
  }

  private async applyTransaction(shape: Shape, tx: Transaction): Promise<void> {
    if (shape.deleted) return;
    if (tx.commitLsn <= shape.lastLsn) return; // replayed after a restart: already in the log
    if (shape.snapshot && visibleIn(shape.snapshot, tx.xid)) return; // already in the snapshot
    const mine = (c: RowChange): boolean => c.op !== 'truncate' && c.relation.schema === shape.def.schema && c.relation.name === shape.def.table;
    if (tx.changes.some((c) => c.op === 'truncate' && c.relations.some((r) => r.schema === shape.def.schema && r.name === shape.def.table))) {
      this.log(`shape service: ${shape.def.schema}.${shape.def.table} truncated; invalidating shape ${shape.handle}`);
      await this.deleteShape(shape);
      return;
    }
    const changes = tx.changes.filter(mine);
    const toTest: TextRow[] = [];
    for (const c of changes) if (c.op === 'insert' || c.op === 'update') toTest.push(c.new);
    const verdict = await this.matches(shape, toTest);
    let vi = 0;
    const { schema, table, replica } = shape.def;
    const pk = shape.table.pk;
    const sel = shape.selected;
    const relation = [schema, table];
    const lsn = tx.commitLsn.toString();
    const out: { key: string; value: Record<string, string | null>; old_value?: Record<string, string | null>; operation: 'insert' | 'update' | 'delete' }[] =
      [];
    const keyOf = (row: TextRow): string => rowKey(schema, table, pk, row);
    for (const c of changes) {
      if (c.op === 'insert') {
        if (!verdict[vi++]) continue;
        const key = keyOf(c.new);
        shape.keys.add(key);
        out.push({ key, value: pick(c.new, sel), operation: 'insert' });
      } else if (c.op === 'update') {
        const match = verdict[vi++]!;
        const oldRow = c.old ?? c.key ?? c.new;
        const oldKey = keyOf({ ...c.new, ...(c.key ?? {}), ...(c.old ?? {}) });
        const newKey = keyOf(c.new);
        const wasIn = shape.keys.has(oldKey);
        if (wasIn && match && oldKey === newKey) {
          let value: Record<string, string | null>;
          let old_value: Record<string, string | null> | undefined;
          if (c.old) {
            const changed = sel.filter((col) => c.new[col] !== undefined && c.new[col] !== c.old![col]);
            value = replica === 'full' ? pick(c.new, sel) : pick(c.new, [...new Set([...pk, ...changed])]);
            if (replica === 'full') old_value = pick(c.old, changed);
          } else {
            value = pick(c.new, sel);
          }
          out.push({ key: newKey, value, ...(old_value ? { old_value } : {}), operation: 'update' });
        } else if (wasIn) {
          // Moved out of the shape (or its key changed): delete the old key, insert the new row if it still matches.
          shape.keys.delete(oldKey);
          out.push({ key: oldKey, value: replica === 'full' && c.old ? pick(c.old, sel) : pick(oldRow, pk), operation: 'delete' });
          if (match) {
            shape.keys.add(newKey);
            out.push({ key: newKey, value: pick(c.new, sel), operation: 'insert' });
          }
        } else if (match) {
          shape.keys.add(newKey);
          out.push({ key: newKey, value: pick(c.new, sel), operation: 'insert' });
        }
      } else if (c.op === 'delete') {
        const oldRow = c.old ?? c.key ?? {};
        const key = keyOf(oldRow);
        if (!shape.keys.delete(key)) continue;
        out.push({ key, value: replica === 'full' && c.old ? pick(c.old, sel) : pick(oldRow, pk), operation: 'delete' });
      }
    }
    shape.lastLsn = tx.commitLsn;
    shape.metaDirty = true;
    if (out.length === 0) return;
    const entries = out.map((m, i) => ({
      offset: { tx: tx.commitLsn, op: i },
      json: JSON.stringify({
        key: m.key,
        value: m.value,
        ...(m.old_value ? { old_value: m.old_value } : {}),
        headers: { operation: m.operation, relation, lsn, op_position: i, txids: [tx.xid], ...(i === out.length - 1 ? { last: true } : {}) },
      }),
    }));
    shape.log.append(entries);
    if (shape.log.size - shape.snapshotBytes > this.maxLogBytes) {
      this.log(`shape service: shape ${shape.handle} log passed ${this.maxLogBytes} bytes; dropping it so its clients refetch a compact snapshot`);
      await this.deleteShape(shape);
      return;
    }
    shape.notify();
  }

  /** Validate a client's definition. Throws TableError / WhereError (both mean 400). */
  async resolveDefinition(req: ShapeRequest): Promise<{ def: Definition; defKey: string; table: TableInfo }> {
    const { schema, name } = parseTableName(req.table);
    const table = await this.cachedTable(schema, name);
    const names = new Set(table.columns.map((c) => c.name));
    let columns: string[] | null = null;
    if (req.columns !== undefined && req.columns !== '') {
      const list = parseColumnList(req.columns);
      for (const c of list) if (!names.has(c)) throw new TableError(`columns: unknown column ${quoteIdent(c)} in ${quoteIdent(schema)}.${quoteIdent(name)}`);
      for (const k of table.pk) if (!list.includes(k)) throw new TableError(`columns: must include the primary key column ${quoteIdent(k)}`);
      // Canonical order (the table's) so the same projection is one shape.
      columns = table.columns.map((c) => c.name).filter((c) => list.includes(c));
    }
    const replica = req.replica ?? 'default';
    if (replica !== 'default' && replica !== 'full') throw new TableError(`replica: must be "default" or "full", not ${JSON.stringify(replica)}`);
    const where = req.where && req.where.trim() !== '' ? req.where : null;
    const params = req.params ?? {};
    if (where) compileWhere(where, names, params);
    else if (Object.keys(params).length > 0) throw new TableError('params: given without a where clause');
    const def: Definition = { schema, table: name, where, params, columns, replica };
    return { def, defKey: JSON.stringify(def), table };
  }

  /** Table metadata, cached for 2 s (every poll resolves its definition; relation changes clear it). */
  private tableCache = new Map<string, { at: number; table: Promise<TableInfo> }>();
  private cachedTable(schema: string, name: string): Promise<TableInfo> {
    const k = `${schema}.${name}`;
    const hit = this.tableCache.get(k);
    if (hit && Date.now() - hit.at < 2000) return hit.table;
    const table = loadTable(this.pool, schema, name);
    this.tableCache.set(k, { at: Date.now(), table });
    table.catch(() => this.tableCache.delete(k));
    if (this.tableCache.size > 1000) this.tableCache.clear();
    return table;
  }

  /** The current shape for a definition, creating it (and taking its snapshot) when there is none. */
  async getOrCreate(req: ShapeRequest): Promise<Shape> {
    if (this.stopped) throw new Error('shape service stopped');
    const { def, defKey, table } = await this.resolveDefinition(req);
    let p = this.byDef.get(defKey);
    if (!p) {
      p = this.createShape(def, defKey, table);
      this.byDef.set(defKey, p);
      p.catch(() => {
        if (this.byDef.get(defKey) === p) this.byDef.delete(defKey);
      });
    }
    const shape = await p;
    await shape.ready;
    return shape;
  }

  /** The definition key a request resolves to (to check a handle belongs to it). */
  async definitionKey(req: ShapeRequest): Promise<string> {
    return (await this.resolveDefinition(req)).defKey;
  }

  /** The current shape for a definition key, if one exists (created or being created). */
  async findByDefinition(defKey: string): Promise<Shape | undefined> {
    const p = this.byDef.get(defKey);
    return p ? await p.catch(() => undefined) : undefined;
  }

  getByHandle(handle: string): Shape | undefined {
    return this.byHandle.get(handle);
  }

  /** The creation under way (or the last one): creations run one at a time, see {@link createShape}. */
  private creation: Promise<void> = Promise.resolve();

  /**
   * Make a shape and take its snapshot. One creation at a time: a shape under creation holds
   * memory the budget's eviction cannot free (only created shapes are dropped, and one is refused
   * only once it alone passes the whole budget), so concurrent creations could each grow to the
   * whole budget (issue 12 review: 12 at once peaked at ~7× it). Serialised, all shapes' memory
   * stays within the budget plus the one shape under creation (which the budget refuses past it),
   * at most about twice the budget, whatever the number of requests at once.
   */
  private async createShape(def: Definition, defKey: string, table: TableInfo): Promise<Shape> {
    const before = this.creation;
    let done!: () => void;
    this.creation = new Promise<void>((r) => (done = r));
    try {
      await before;
      if (this.stopped) throw new Error('shape service stopped');
      return await this.createShapeNow(def, defKey, table);
    } finally {
      done();
    }
  }

  private async createShapeNow(def: Definition, defKey: string, table: TableInfo): Promise<Shape> {
    let handle = makeHandle(defKey);
    while (this.byHandle.has(handle)) handle = makeHandle(defKey + Math.random());
    const dir = join(this.storageDir, 'shapes', handle);
    mkdirSync(dir, { recursive: true });
    const shape = new Shape(handle, defKey, def, table, dir);
    // Registered before the snapshot: transactions decoded from now on queue behind it.
    this.byHandle.set(handle, shape);
    const recent = this.recent.map((r) => r.tx);
    shape.ready = shape.enqueue(async () => {
      await this.takeSnapshot(shape);
      for (const tx of recent) await this.applyTransaction(shape, tx);
    });
    try {
      await shape.ready;
    } catch (e) {
      this.byHandle.delete(handle);
      shape.deleted = true;
      shape.log.close();
      rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    if (shape.memoryBytes > this.maxMemoryBytes) {
      // Not deleteShape: it waits for this creation to settle.
      const bytes = shape.memoryBytes;
      this.byHandle.delete(handle);
      shape.deleted = true;
      shape.notify();
      shape.log.close();
      rmSync(dir, { recursive: true, force: true });
      throw new ShapeTooLargeError(bytes, this.maxMemoryBytes);
    }
    await this.enforceMemoryBudget(shape); // others make room; never this one
    shape.created = true;
    this.log(`shape service: shape ${handle} on ${def.schema}.${def.table}: ${shape.keys.size} row(s)`);
    return shape;
  }

  private async takeSnapshot(shape: Shape): Promise<void> {
    const client = await this.pool.connect();
    const { schema, table } = shape.def;
    const rel = `${quoteIdent(schema)}.${quoteIdent(table)}`;
    const relation = [schema, table];
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const snap = parseSnapshot((await client.query<{ s: string }>('SELECT pg_current_snapshot()::text AS s')).rows[0]!.s);
      const cols = shape.selected.map((c) => `${quoteIdent(c)}::text`).join(', ');
      const keyCols = shape.table.pk.filter((k) => !shape.selected.includes(k));
      const extra = keyCols.length ? ', ' + keyCols.map((c) => `${quoteIdent(c)}::text`).join(', ') : '';
      const where = shape.where ? ` WHERE ${shape.where.sql}` : '';
      await client.query(`DECLARE shape_snapshot NO SCROLL CURSOR FOR SELECT ${cols}${extra} FROM ${rel}${where}`, shape.where?.values ?? []);
      let i = 0;
      for (;;) {
        const res = await client.query<Record<string, string | null>>(`FETCH ${SNAPSHOT_BATCH} FROM shape_snapshot`);
        if (res.rows.length === 0) break;
        const batch = res.rows.map((row) => {
          const key = rowKey(schema, table, shape.table.pk, row);
          shape.keys.add(key);
          return { offset: { tx: 0n, op: i++ }, json: JSON.stringify({ key, value: pick(row, shape.selected), headers: { operation: 'insert', relation } }) };
        });
        shape.log.append(batch);
        // Refused as soon as it outgrows the whole budget, not after reading the rest of the table.
        if (shape.memoryBytes > this.maxMemoryBytes) throw new ShapeTooLargeError(shape.memoryBytes, this.maxMemoryBytes);
      }
      await client.query('COMMIT');
      const snapshotEnd = { headers: { control: 'snapshot-end', xmin: snap.xmin.toString(), xmax: snap.xmax.toString(), xip_list: snap.xip.map(String) } };
      shape.log.append([{ offset: { tx: 0n, op: i }, json: JSON.stringify(snapshotEnd) }]);
      shape.snapshot = snap;
      shape.snapshotBytes = shape.log.snapshotSize();
      shape.log.flush();
      this.writeMeta(shape);
    } catch (e) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      client.release();
    }
  }

  private writeMeta(shape: Shape): void {
    if (shape.deleted || !shape.snapshot) return;
    const meta: ShapeMeta = {
      version: 1,
      handle: shape.handle,
      def: shape.def,
      signature: tableSignature(shape.table),
      snapshot: { xmin: shape.snapshot.xmin.toString(), xmax: shape.snapshot.xmax.toString(), xip: shape.snapshot.xip.map(String) },
      lastLsn: shape.lastLsn.toString(),
      createdAt: shape.createdAt,
      lastRequestedAt: new Date(shape.lastRequestedAt).toISOString(),
    };
    shape.persistedRequestedAt = shape.lastRequestedAt;
    const path = join(shape.dir, 'meta.json');
    writeFileSync(path + '.tmp', JSON.stringify(meta));
    renameSync(path + '.tmp', path);
    shape.metaDirty = false;
  }

  /** Invalidate a shape: its clients get 409 must-refetch; its log is removed. */
  async deleteShape(shape: Shape): Promise<void> {
    if (shape.deleted) return;
    shape.deleted = true;
    this.byHandle.delete(shape.handle);
    const cur = this.byDef.get(shape.defKey);
    if (cur) {
      const s = await cur.catch(() => null);
      if (s === shape && this.byDef.get(shape.defKey) === cur) this.byDef.delete(shape.defKey);
    }
    shape.notify();
    shape.log.close();
    rmSync(shape.dir, { recursive: true, force: true });
  }

  /**
   * Drop every shape no request has named for {@link ShapeServiceOptions.idleShapeMs} as of `now`
   * (ms) (its clients, should any come back, get 409 must-refetch). Nothing when idle eviction is off.
   * @returns the handles dropped
   */
  async evictIdle(now = Date.now()): Promise<string[]> {
    if (this.idleShapeMs === null) return [];
    const out: string[] = [];
    for (const s of [...this.byHandle.values()]) {
      if (s.deleted || s.waiting > 0 || now - s.lastRequestedAt <= this.idleShapeMs) continue;
      await this.deleteShape(s);
      out.push(s.handle);
    }
    if (out.length) this.log(`shape service: dropped ${out.length} shape(s) not requested for ${Math.round(this.idleShapeMs / 1000)} s`);
    return out;
  }

  /** Persist logs and metadata, then acknowledge the slot up to what is persisted. */
  async flush(): Promise<void> {
    const lsn = this.processedLsn;
    for (const s of this.byHandle.values()) {
      if (!s.snapshot || s.deleted) continue;
      s.log.flush();
      if (s.metaDirty) this.writeMeta(s);
    }
    if (lsn > this.ackedLsn) {
      this.writeState();
      this.ackedLsn = lsn;
    }
    if (this.stream && this.ackedLsn > 0n) await this.stream.acknowledge(this.ackedLsn).catch(() => undefined);
  }

  /** Stop streaming, persist everything, answer waiting long-polls, close connections. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.flushTimer) clearInterval(this.flushTimer);
    if (this.idleTimer) clearInterval(this.idleTimer);
    try {
      await this.stream?.stop().catch(() => undefined);
      for (const s of this.byHandle.values()) {
        if (s.snapshot && !s.deleted) {
          s.log.flush();
          this.writeMeta(s);
        }
        s.notify();
        s.log.close();
      }
      if (this.processedLsn > this.ackedLsn) {
        this.ackedLsn = this.processedLsn;
        this.writeState();
      }
    } finally {
      await this.pool.end().catch(() => undefined);
    }
  }

  /** Offset formatting for the HTTP layer. */
  static format(o: Offset): string {
    return formatOffset(o);
  }
  static compare(a: Offset, b: Offset): number {
    return compareOffsets(a, b);
  }
}
