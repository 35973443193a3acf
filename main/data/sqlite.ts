/**
 * The SQLite connection behind a {@link Db} handle, for the modules of main/data/ only (and the
 * verification tools: tests, fixtures, the eval and benchmarks, which inspect the database to
 * judge outcomes). The `Db` handle that the rest of main/ passes around carries no connection,
 * so code above the data layer cannot run SQL even with a `Db` in hand; `npm run lint`
 * (`.dependency-cruiser.cjs` rule `sql-connection-only-in-data-layer`) keeps this module's
 * importers to main/data/ and the verification tools.
 */
import type Database from 'better-sqlite3';
import type { Db } from './db';

const CONNECTIONS = new WeakMap<Db, Database.Database>();

/** Bind an open connection to its handle (openDb does this once per handle). */
export function bindConnection(db: Db, connection: Database.Database): void {
  CONNECTIONS.set(db, connection);
}

/**
 * The better-sqlite3 connection of an open database.
 * @throws Error when `db` was not returned by openDb (a programming error)
 */
export function sqlite(db: Db): Database.Database {
  const c = CONNECTIONS.get(db);
  if (!c) throw new Error('Not a database opened by openDb (main/data/db.ts).');
  return c;
}

const STATEMENTS = new WeakMap<Db, Map<string, Database.Statement<unknown[]>>>();

/**
 * A prepared statement for `sql` on `db`'s connection, prepared once per connection and reused
 * (preparing costs more than running a small insert: the harness writes several rows per tool
 * call). Only for statements run with `.run()`, `.get()` or `.all()` in their default mode: a
 * caller that switches a mode (`pluck`, `raw`, `expand`) or holds an `.iterate()` open must
 * prepare its own.
 * @throws Error when `db` was not returned by openDb, or `sql` does not compile (SqliteError)
 */
export function statement(db: Db, sql: string): Database.Statement<unknown[]> {
  let cache = STATEMENTS.get(db);
  if (!cache) STATEMENTS.set(db, (cache = new Map()));
  let s = cache.get(sql);
  if (!s) cache.set(sql, (s = sqlite(db).prepare(sql)));
  return s;
}
