/**
 * First start of an HQ database: seed the demo club (both organisations, the same ids, rows and
 * PIN hashes as the desktop's seed for the same `seed` and `today`: models/seed/demo.ts) and mark
 * the installation initialised, in one transaction as the owner role. Row-level security binds
 * the owner too, so each batch runs with its organisation's tenant setting.
 *
 * "Empty" means never initialised (no `hq_installation` row): a database that was initialised
 * without the demo (`--no-demo`) is never seeded later.
 */
import pg from 'pg';
import { generateDemo, type SeedSummary } from '../models/seed/demo';
import { hashPin } from './auth/pin';
import { hqTypes } from './pg/db';

/** Columns that are 0/1 in SQLite and boolean in Postgres. */
const BOOLEAN_COLUMNS = new Set(['active', 'view_matches_declared', 'trustworthy', 'via_assistant']);
const BATCH = 500;

/** What {@link initialiseHq} did. */
export type InitResult = { initialised: false } | { initialised: true; seeded: false } | { initialised: true; seeded: true; summary: SeedSummary };

/** Multi-row inserts, one tenant per batch. */
class PgBatchWriter {
  readonly counts: Record<string, number> = {};
  private table = '';
  private cols: string[] = [];
  private org = '';
  private rows: unknown[][] = [];
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly client: pg.Client) {}

  insert(table: string, row: Record<string, unknown>): void {
    const org = (table === 'organization' ? row.id : row.org_id) as string;
    const cols = Object.keys(row);
    if (table !== this.table || org !== this.org || cols.join(',') !== this.cols.join(',') || this.rows.length >= BATCH) this.flush();
    this.table = table;
    this.org = org;
    this.cols = cols;
    this.rows.push(cols.map((c) => (BOOLEAN_COLUMNS.has(c) && (row[c] === 0 || row[c] === 1) ? row[c] === 1 : (row[c] ?? null))));
    this.counts[table] = (this.counts[table] ?? 0) + 1;
  }

  flush(): void {
    if (this.rows.length === 0) return;
    const { table, cols, org, rows } = this;
    this.rows = [];
    const values = rows.map((_, r) => `(${cols.map((__, c) => `$${r * cols.length + c + 1}`).join(', ')})`).join(', ');
    const sql = `INSERT INTO ${table} (${cols.join(', ')}) VALUES ${values}`;
    this.chain = this.chain.then(async () => {
      await this.client.query("SELECT set_config('hq.org_id', $1, true)", [org]);
      await this.client.query(sql, rows.flat());
    });
  }

  async done(): Promise<void> {
    this.flush();
    await this.chain;
  }
}

/**
 * Initialise the HQ database at `ownerUrl` if it never was: seed the demo club unless
 * `demo` is false, and record the installation.
 * @param today the demo's last day of data (YYYY-MM-DD). @default the current UTC date
 */
export async function initialiseHq(ownerUrl: string, opts: { demo?: boolean; seed?: number; today?: string } = {}): Promise<InitResult> {
  const client = new pg.Client({ connectionString: ownerUrl, types: hqTypes });
  await client.connect();
  try {
    await client.query('BEGIN');
    await client.query('LOCK TABLE hq_installation IN EXCLUSIVE MODE');
    const done = await client.query('SELECT 1 FROM hq_installation');
    if (done.rowCount) {
      await client.query('ROLLBACK');
      return { initialised: false };
    }
    let result: InitResult = { initialised: true, seeded: false };
    const seed = opts.seed ?? 1;
    const today = opts.today ?? new Date().toISOString().slice(0, 10);
    if (opts.demo !== false) {
      const w = new PgBatchWriter(client);
      const summary = generateDemo(w, { seed, today, pinHash: (pin, salt) => hashPin(pin, salt) });
      await w.done();
      result = { initialised: true, seeded: true, summary: { ...summary, counts: w.counts } };
    }
    await client.query('INSERT INTO hq_installation (id, initialised_at, demo_seed, demo_today) VALUES (1, now(), $1, $2)', [
      opts.demo !== false ? seed : null,
      opts.demo !== false ? today : null,
    ]);
    await client.query('COMMIT');
    return result;
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    await client.end();
  }
}
