/**
 * Change capture: one logical replication stream (pgoutput, protocol 1) from a persistent slot,
 * decoded into committed transactions in commit order.
 *
 * Column values are kept as Postgres text (as Electric sends them): the relation's per-column
 * parsers from pg-logical-replication are replaced by the identity. The stream never acknowledges
 * on its own: `acknowledge(lsn)` is called by the service once every transaction up to `lsn` is
 * durably in the shape logs, so the slot replays anything not yet persisted after a restart.
 */
import { LogicalReplicationService, PgoutputPlugin, type Pgoutput } from 'pg-logical-replication';

/** A row as text values by column name (null: SQL NULL; undefined: an unchanged TOASTed value). */
export type TextRow = Record<string, string | null | undefined>;

/** One row change inside a transaction. */
export type RowChange =
  | { op: 'insert'; relation: Pgoutput.MessageRelation; new: TextRow }
  | { op: 'update'; relation: Pgoutput.MessageRelation; new: TextRow; old: TextRow | null; key: TextRow | null }
  | { op: 'delete'; relation: Pgoutput.MessageRelation; old: TextRow | null; key: TextRow | null }
  | { op: 'truncate'; relations: Pgoutput.MessageRelation[] };

/** A committed transaction. */
export interface Transaction {
  /** 32-bit transaction id (as `pg_current_xact_id()::xid`). */
  xid: number;
  /** LSN of the commit record, as a 64-bit integer. */
  commitLsn: bigint;
  /** LSN just past the commit (what is acknowledged once the transaction is persisted). */
  endLsn: bigint;
  changes: RowChange[];
}

/** "16/B374D848" → 0x16B374D848n. */
export function lsnToBigInt(lsn: string): bigint {
  const [hi, lo] = lsn.split('/');
  return (BigInt(parseInt(hi ?? '0', 16)) << 32n) | BigInt(parseInt(lo ?? '0', 16));
}

export function bigIntToLsn(v: bigint): string {
  return `${(v >> 32n).toString(16).toUpperCase()}/${(v & 0xffffffffn).toString(16).toUpperCase()}`;
}

/** Text settings Electric formats values with (its API spec): applied to every session we read from. */
export const OUTPUT_SETTINGS: Record<string, string> = {
  DateStyle: 'ISO, DMY',
  TimeZone: 'UTC',
  IntervalStyle: 'iso_8601',
  extra_float_digits: '1',
  bytea_output: 'hex',
};

class RawTextPgoutput extends PgoutputPlugin {
  override parse(buffer: Buffer): Pgoutput.Message {
    const msg = super.parse(buffer) as Pgoutput.Message;
    if (msg.tag === 'relation') for (const c of msg.columns) c.parser = (raw: unknown) => raw;
    return msg;
  }
}

/** Callbacks of a `ReplicationStream`. */
export interface ReplicationHandlers {
  /** A committed transaction; awaited before the next one is delivered. */
  onTransaction(tx: Transaction): Promise<void>;
  /** A relation (table) description, sent before the first change to it on each connection. */
  onRelation(rel: Pgoutput.MessageRelation): Promise<void>;
  /**
   * Everything up to `lsn` has been delivered and nothing is in flight (a keepalive while idle):
   * the caller may treat `lsn` as processed.
   */
  onIdle(lsn: bigint): void;
  onError(err: Error): void;
}

/** A running replication connection on one slot. */
export class ReplicationStream {
  private readonly svc: LogicalReplicationService;
  private queue: { msg: Pgoutput.Message; lsn: string }[] = [];
  private head = 0;
  private processing = false;
  private open: Transaction | null = null;
  private stopped = false;
  private lastAck = '0/0';
  connected = false;

  constructor(
    connectionString: string,
    private readonly slot: string,
    private readonly publication: string,
    private readonly handlers: ReplicationHandlers,
  ) {
    const options = Object.entries(OUTPUT_SETTINGS)
      .map(([k, v]) => `-c ${k}=${v.replace(/ /g, '\\ ')}`)
      .join(' ');
    this.svc = new LogicalReplicationService(
      { connectionString, options },
      { acknowledge: { auto: false, timeoutSeconds: 0 }, flowControl: { enabled: false } },
    );
    this.svc.on('data', (lsn: string, msg: Pgoutput.Message) => {
      this.queue.push({ msg, lsn });
      void this.drain();
    });
    this.svc.on('heartbeat', (lsn: string, _ts: number, shouldRespond: boolean) => {
      if (!this.processing && this.head >= this.queue.length && !this.open) this.handlers.onIdle(lsnToBigInt(lsn));
      if (shouldRespond) void this.svc.acknowledge(this.lastAck).catch(() => undefined);
    });
    this.svc.on('start', () => {
      this.connected = true;
    });
    this.svc.on('error', (e: Error) => {
      this.connected = false;
      if (!this.stopped) this.handlers.onError(e);
    });
  }

  /** Start streaming; resolves when the stream has started (rejects if the slot cannot be used). */
  async start(): Promise<void> {
    const plugin = new RawTextPgoutput({ protoVersion: 1, publicationNames: [this.publication] });
    await new Promise<void>((res, rej) => {
      const onStart = (): void => {
        this.svc.off('error', onErr);
        res();
      };
      const onErr = (e: Error): void => {
        this.svc.off('start', onStart);
        rej(e);
      };
      this.svc.once('start', onStart);
      this.svc.once('error', onErr);
      this.svc.subscribe(plugin, this.slot).then(
        () => {
          this.connected = false;
          if (!this.stopped) this.handlers.onError(new Error('replication stream ended'));
        },
        (e: Error) => {
          this.connected = false;
          rej(e);
        },
      );
    });
  }

  /** Tell Postgres everything up to `lsn` is persisted (the slot may release that WAL). */
  async acknowledge(lsn: bigint): Promise<void> {
    this.lastAck = bigIntToLsn(lsn);
    if (this.connected) await this.svc.acknowledge(this.lastAck);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.connected = false;
    await this.svc.destroy();
  }

  private async drain(): Promise<void> {
    if (this.processing) return;
    this.processing = true;
    try {
      while (this.head < this.queue.length && !this.stopped) {
        const { msg, lsn } = this.queue[this.head++]!;
        // Rows of a transaction not touching any shape are only pushed onto `open`; keep the queue small.
        if (this.head > 4096) {
          this.queue = this.queue.slice(this.head);
          this.head = 0;
        }
        await this.handle(msg, lsn);
      }
      this.queue = [];
      this.head = 0;
    } catch (e) {
      this.handlers.onError(e as Error);
    } finally {
      this.processing = false;
    }
  }

  private async handle(msg: Pgoutput.Message, lsn: string): Promise<void> {
    switch (msg.tag) {
      case 'begin':
        this.open = { xid: msg.xid, commitLsn: lsnToBigInt(msg.commitLsn ?? lsn), endLsn: 0n, changes: [] };
        return;
      case 'relation':
        await this.handlers.onRelation(msg);
        return;
      case 'insert':
        this.open?.changes.push({ op: 'insert', relation: msg.relation, new: msg.new as TextRow });
        return;
      case 'update':
        this.open?.changes.push({
          op: 'update',
          relation: msg.relation,
          new: msg.new as TextRow,
          old: msg.old as TextRow | null,
          key: msg.key as TextRow | null,
        });
        return;
      case 'delete':
        this.open?.changes.push({ op: 'delete', relation: msg.relation, old: msg.old as TextRow | null, key: msg.key as TextRow | null });
        return;
      case 'truncate':
        this.open?.changes.push({ op: 'truncate', relations: msg.relations });
        return;
      case 'commit': {
        const tx = this.open;
        this.open = null;
        if (!tx) return;
        tx.endLsn = lsnToBigInt(msg.commitEndLsn ?? lsn);
        await this.handlers.onTransaction(tx);
        return;
      }
      default:
        return;
    }
  }
}
