import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as pgSchema from './schema/pg.js';

/**
 * Repositories are written once against the pg-core typings. At run time a SQLite database gets
 * the sqlite-core tables (./schema/sqlite.ts mirrors ./schema/pg.ts column for column), and
 * drizzle renders each query in the right dialect; only this folder knows which one is in use.
 */
export type Schema = typeof pgSchema;
// biome-ignore lint/suspicious/noExplicitAny: the relational-query schema parameter is unused here
export type Q = PgDatabase<PgQueryResultHKT, any>;
export type Dialect = 'sqlite' | 'postgres';

export interface Executor {
  readonly dialect: Dialect;
  readonly s: Schema;
  /** Runs one query built on q; on SQLite it waits while another request's transaction is open. */
  run<T>(build: (q: Q) => PromiseLike<T>): Promise<T>;
}

interface Executable<T> {
  execute(): Promise<T>;
}

/** drizzle query builders run their SQL synchronously inside execute() on better-sqlite3. */
export function executeNow<T>(built: PromiseLike<T>): Promise<T> {
  const e = built as unknown as Partial<Executable<T>>;
  return typeof e.execute === 'function' ? e.execute() : Promise.resolve(built);
}
