import { type Clock, systemClock } from '../clock.js';
import { type Migration, migrationsFor } from './migrations/index.js';

export interface MigrationTarget {
  exec(sql: string): Promise<void>;
  query(sql: string): Promise<Record<string, unknown>[]>;
  lock(): Promise<void>;
  unlock(ok: boolean): Promise<void>;
}

/** Applies the migrations not yet recorded in drm_migrations; returns how many it applied. */
export async function migrate(
  dialect: 'sqlite' | 'postgres',
  target: MigrationTarget,
  { migrations = migrationsFor(dialect), clock = systemClock }: { migrations?: Migration[]; clock?: Clock } = {},
): Promise<number> {
  const big = dialect === 'sqlite' ? 'integer' : 'bigint';
  // The lock comes first: two processes creating drm_migrations at once on an empty Postgres
  // database collide in the catalog (pg_type's unique index) even with `if not exists`.
  await target.lock();
  let ok = false;
  let applied = 0;
  try {
    await target.exec(
      `create table if not exists drm_migrations (version integer primary key, name ` +
        `text not null, applied_at ${big} not null)`,
    );
    const done = new Set((await target.query('select version from drm_migrations')).map((r) => Number(r.version)));
    const pending = migrations.filter((m) => !done.has(m.version));
    for (const m of pending) {
      if (dialect === 'postgres') await target.exec('begin');
      try {
        await target.exec(m.sql);
        await target.exec(
          `insert into drm_migrations (version, name, applied_at) values (${m.version}, ` +
            `'${m.name.replace(/'/g, "''")}', ${clock.now()})`,
        );
        if (dialect === 'postgres') await target.exec('commit');
      } catch (err) {
        if (dialect === 'postgres') await target.exec('rollback');
        throw err;
      }
      applied++;
    }
    ok = true;
  } finally {
    await target.unlock(ok);
  }
  return applied;
}

export function latestMigration(dialect: 'sqlite' | 'postgres'): number {
  return Math.max(...migrationsFor(dialect).map((m) => m.version));
}

interface SqliteHandle {
  exec(sql: string): unknown;
  pragma(sql: string): unknown;
  prepare(sql: string): { all(): unknown[] };
}

/** One SQLite connection: all pending migrations run in one transaction under its write lock. */
export function sqliteMigrationTarget(sqlite: SqliteHandle): MigrationTarget {
  return {
    exec: async (sql) => void sqlite.exec(sql),
    query: async (sql) => sqlite.prepare(sql).all() as Record<string, unknown>[],
    // SQLite changes a table by copying it into a new one; the foreign-key checks are off
    // meanwhile (the pragma does nothing inside a transaction) and the keys are checked once
    // before the commit, as SQLite's documentation on schema changes prescribes.
    lock: async () => {
      sqlite.pragma('foreign_keys = OFF');
      sqlite.exec('BEGIN IMMEDIATE');
    },
    unlock: async (ok) => {
      try {
        const broken = ok ? (sqlite.pragma('foreign_key_check') as unknown[]) : [];
        sqlite.exec(ok && broken.length === 0 ? 'COMMIT' : 'ROLLBACK');
        if (broken.length > 0)
          throw new Error(`the migration left ${broken.length} broken foreign key(s); rolled back`);
      } finally {
        sqlite.pragma('foreign_keys = ON');
      }
    },
  };
}

interface PostgresClient {
  query(sql: string): Promise<{ rows: Record<string, unknown>[] }>;
}

/** One Postgres connection; each migration commits on its own. */
export function postgresMigrationTarget(client: PostgresClient): MigrationTarget {
  return {
    exec: async (sql) => void (await client.query(sql)),
    query: async (sql) => (await client.query(sql)).rows,
    // Several `drm serve` processes may start at once on one database.
    lock: async () => void (await client.query('select pg_advisory_lock(724001)')),
    unlock: async () => void (await client.query('select pg_advisory_unlock(724001)')),
  };
}
