import { type Clock, systemClock } from '../clock.js';
import type { Logger } from '../log.js';
import { type Dialect, type Exclusive, makeExecutor, type Q, type Schema } from './executor.js';
import { migrate, postgresMigrationTarget, sqliteMigrationTarget } from './migrate.js';
import { Mutex } from './mutex.js';
import { withStatementCache } from './statement-cache.js';
import { guardOuterRepos, TransactionScope } from './transaction-scope.js';
import { makeRepos, type Repos } from './repos/index.js';
import { buildSqliteTables } from './schema/sqlite.js';
import * as tables from './schema/description.js';

export interface Database {
  readonly dialect: Dialect;
  readonly repos: Repos;
  /**
   * Runs fn with repositories bound to one transaction: all of it commits or none of it does.
   * fn must only do database work (no network): on SQLite it holds the only connection.
   */
  transaction<T>(fn: (repos: Repos) => Promise<T>): Promise<T>;
  migrate(): Promise<number>;
  /** The newest migration applied (0 for a database drm never set up). */
  appliedVersion(): Promise<number>;
  /** When a migration was applied here (epoch ms), or undefined where it was not. */
  migratedAt(version: number): Promise<number | undefined>;
  close(): Promise<void>;
}

/** The highest version in drm_migrations, or 0 where the table does not exist. */
async function highestVersion(query: (sql: string) => Promise<Record<string, unknown>[]>): Promise<number> {
  try {
    const rows = await query('select max(version) as v from drm_migrations');
    return Number(rows[0]?.v ?? 0);
  } catch {
    return 0;
  }
}

/** drm_migrations.applied_at of one version. */
async function appliedAtOf(
  query: (sql: string) => Promise<Record<string, unknown>[]>,
  version: number,
): Promise<number | undefined> {
  if (!Number.isSafeInteger(version)) return undefined;
  const rows = await query(`select applied_at as t from drm_migrations where version = ${version}`);
  return rows[0] === undefined ? undefined : Number(rows[0].t);
}

export interface OpenOptions {
  log: Logger;
  /** dates the migrations applied (drm_migrations.applied_at) */
  clock?: Clock;
  /** Apply pending migrations while opening (servers do; `drm migrate` does it explicitly). */
  migrate?: boolean;
}

export async function openDatabase(url: string, options: OpenOptions): Promise<Database> {
  const clock = options.clock ?? systemClock;
  const db = url.startsWith('sqlite:')
    ? await openSqlite(url.slice('sqlite:'.length), clock)
    : await openPostgres(url, clock);
  if (options.migrate !== false) {
    const applied = await db.migrate();
    if (applied > 0) options.log.info('database migrated', { dialect: db.dialect, applied });
  }
  return db;
}

async function openSqlite(file: string, clock: Clock): Promise<Database> {
  const [{ default: BetterSqlite }, { drizzle }, fs, path] = await Promise.all([
    import('better-sqlite3'),
    import('drizzle-orm/better-sqlite3'),
    import('node:fs'),
    import('node:path'),
  ]);
  if (file !== ':memory:') fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const sqlite = new BetterSqlite(file);
  // Every pragma in one place. busy_timeout comes first so that a second process opening the
  // same new file waits instead of failing (long enough for another process's migration of a new
  // database on a loaded machine: 5 s was seen to run out); WAL lets readers run beside the writer
  // (and beside `drm admin` in another process).
  sqlite.pragma('busy_timeout = 15000');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // The WAL is copied back into the database every 10,000 pages instead of 1,000: a checkpoint
  // writes each page once however often it changed, and a new session rewrites the same few
  // index pages, so ten times fewer checkpoints copy far less (first-time sessions 11-16% faster;
  // the WAL file grows to about 40 MB between them).
  sqlite.pragma('wal_autocheckpoint = 10000');
  sqlite.pragma('foreign_keys = ON');
  const q = drizzle(withStatementCache(sqlite)) as unknown as Q;
  // The repositories are typed once, against the description; SQLite's tables are built from it
  // column for column, so only the query builder behind this cast differs (and drizzle renders it).
  const s = buildSqliteTables() as unknown as Schema;
  const mutex = new Mutex();

  const outsideTransactions: Exclusive = (fn) => mutex.runExclusive(fn);
  const txRepos = makeRepos(makeExecutor('sqlite', s, q));
  txRepos.transaction = (fn) => fn(txRepos);
  const scope = new TransactionScope();
  const repos = guardOuterRepos(makeRepos(makeExecutor('sqlite', s, q, outsideTransactions)), scope);

  const db: Database = {
    dialect: 'sqlite',
    repos,
    async transaction(fn) {
      scope.refuseInside('db.transaction() of the outer database handle');
      await mutex.acquire();
      sqlite.exec('BEGIN IMMEDIATE');
      try {
        const result = await scope.run(() => fn(txRepos));
        sqlite.exec('COMMIT');
        return result;
      } catch (err) {
        if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
        throw err;
      } finally {
        mutex.release();
      }
    },
    migrate: () => migrate('sqlite', sqliteMigrationTarget(sqlite), { clock }),
    appliedVersion: () => highestVersion(async (sql) => sqlite.prepare(sql).all() as Record<string, unknown>[]),
    migratedAt: (version) =>
      appliedAtOf(async (sql) => sqlite.prepare(sql).all() as Record<string, unknown>[], version),
    async close() {
      await mutex.acquire();
      sqlite.close();
    },
  };
  repos.transaction = db.transaction;
  return db;
}

async function openPostgres(url: string, clock: Clock): Promise<Database> {
  const [{ default: pg }, { drizzle }] = await Promise.all([import('pg'), import('drizzle-orm/node-postgres')]);
  // bigint columns hold epoch milliseconds and micro-APUSD, well inside 2^53.
  pg.types.setTypeParser(20, (v) => Number(v));
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  pool.on('error', () => {
    /* an idle client lost its connection; the pool replaces it */
  });
  await pool.query('select 1');
  const q = drizzle(pool) as unknown as Q;
  const s = tables;
  const scope = new TransactionScope();
  const repos = guardOuterRepos(makeRepos(makeExecutor('postgres', s, q)), scope);

  const db: Database = {
    dialect: 'postgres',
    repos,
    transaction(fn) {
      scope.refuseInside('db.transaction() of the outer database handle');
      return q.transaction(async (tx) => {
        const txRepos = makeRepos(makeExecutor('postgres', s, tx as unknown as Q));
        txRepos.transaction = (inner) => inner(txRepos);
        return scope.run(() => fn(txRepos));
      });
    },
    async migrate() {
      const client = await pool.connect();
      try {
        return await migrate('postgres', postgresMigrationTarget(client), { clock });
      } finally {
        client.release();
      }
    },
    appliedVersion: () => highestVersion(async (sql) => (await pool.query(sql)).rows),
    migratedAt: (version) => appliedAtOf(async (sql) => (await pool.query(sql)).rows, version),
    close: () => pool.end(),
  };
  repos.transaction = db.transaction;
  return db;
}
