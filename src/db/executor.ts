import { getTableColumns, type SQLWrapper, sql, type Table } from 'drizzle-orm';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import type * as tables from './schema/description.js';

/**
 * Repositories are written once against the one table description (./schema/tables.ts, in
 * pg-core typings). At run time a SQLite database gets the sqlite-core tables built from that
 * description (./schema/sqlite.ts), and drizzle renders each query in the right dialect; only
 * this folder knows which one is in use.
 */
export type Schema = typeof tables;
// biome-ignore lint/suspicious/noExplicitAny: the relational-query schema parameter is unused here
export type Q = PgDatabase<PgQueryResultHKT, any>;
export type Dialect = 'sqlite' | 'postgres';

export type Params = Record<string, unknown>;

export interface Executor {
  readonly dialect: Dialect;
  readonly s: Schema;
  /**
   * Runs one query built on q; on SQLite, outside a transaction, it takes its turn after the transactions open or
   * waiting.
   */
  run<T>(build: (q: Q) => PromiseLike<T>): Promise<T>;
  /**
   * A query built and prepared once, then run with new parameters (sql.placeholder): for the
   * queries every keyed request makes, where drizzle's SQL building would cost more than SQLite
   * running the statement. Gated like run().
   */
  prepared<T>(name: string, build: (q: Q) => Preparable<T>): (params: Params) => Promise<T>;
}

/**
 * A whole number written into the SQL text instead of bound, for LIMIT and OFFSET: SQLite's
 * planner uses their values, so a bound LIMIT makes it re-plan a prepared statement on every run
 * (measured: 22 µs literal against 52 µs bound for the catalog page). drizzle renders an SQL
 * object there as it is; the value is checked, so nothing else can reach the text.
 */
export function literalInt(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`not a non-negative integer: ${n}`);
  return sql.raw(String(n)) as unknown as number;
}

/**
 * A whole row of placeholders named after the table's columns, for an insert prepared once
 * (Executor.prepared) and run with the row itself as its parameters: each value still goes
 * through its column's mapping (booleans and JSON on SQLite).
 */
export function rowOfPlaceholders(table: Table): Record<string, ReturnType<typeof sql.placeholder>> {
  return Object.fromEntries(Object.keys(getTableColumns(table)).map((key) => [key, sql.placeholder(key)]));
}

interface Executable<T> {
  execute(): Promise<T>;
}

/** What drizzle's query builders give for .prepare(name) in both dialects (SQLite ignores the name). */
export interface Preparable<T> {
  prepare(name: string): { execute(params: Params): PromiseLike<T> };
}

/**
 * Runs a statement where no transaction is open (SQLite's one connection outside a transaction); fn runs the SQL
 * synchronously.
 */
export type Exclusive = <T>(fn: () => Promise<T>) => Promise<T>;

/** Builds an executor over q; with `exclusive`, every statement runs through it. */
export function makeExecutor(dialect: Dialect, s: Schema, q: Q, exclusive?: Exclusive): Executor {
  return {
    dialect,
    s,
    run(build) {
      const now = () => executeNow(build(q));
      return exclusive ? exclusive(now) : now();
    },
    prepared<T>(name: string, build: (q: Q) => Preparable<T>) {
      let statement: ReturnType<Preparable<T>['prepare']> | undefined;
      const now = (params: Params) => () => {
        statement ??= build(q).prepare(name);
        return executeNow(statement.execute(params));
      };
      return (params: Params) => (exclusive ? exclusive(now(params)) : now(params)());
    },
  };
}

/** drizzle query builders run their SQL synchronously inside execute() on better-sqlite3. */
export function executeNow<T>(built: PromiseLike<T>): Promise<T> {
  const e = built as unknown as Partial<Executable<T>>;
  return typeof e.execute === 'function' ? e.execute() : Promise.resolve(built);
}

interface Lockable extends SQLWrapper {
  for(strength: 'update', config: { skipLocked: true }): SQLWrapper;
}

/**
 * The subquery that picks a queue's next row, for an UPDATE … WHERE id = (it) that leases the row
 * in one statement. It must be compared with `=`, a scalar subquery that Postgres runs once: as
 * `id IN (…)` it may run again for every row the UPDATE scans, each run locking and returning
 * another row, so that one worker takes the whole queue (the queue contract test saw it). On Postgres it locks the row
 * it picks and skips rows other workers are
 * locking (FOR UPDATE SKIP LOCKED), so workers polling together each take a different job
 * instead of queueing behind one row's lock; SQLite has one writer, and the statement is atomic.
 */
export function skippingLocked(x: Executor, select: Lockable): SQLWrapper {
  return x.dialect === 'postgres' ? select.for('update', { skipLocked: true }) : select;
}
