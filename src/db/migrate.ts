import { type Migration, migrationsFor } from './migrations/index.js';

export interface MigrationTarget {
  exec(sql: string): Promise<void>;
  query(sql: string): Promise<Record<string, unknown>[]>;
  lock(): Promise<void>;
  unlock(ok: boolean): Promise<void>;
}

/** Applies the migrations not yet recorded in drm_migrations; returns how many it applied. */
export async function migrate(dialect: 'sqlite' | 'postgres', target: MigrationTarget): Promise<number> {
  const big = dialect === 'sqlite' ? 'integer' : 'bigint';
  // The lock comes first: two processes creating drm_migrations at once on an empty Postgres
  // database collide in the catalog (pg_type's unique index) even with `if not exists`.
  await target.lock();
  let ok = false;
  let applied = 0;
  try {
    await target.exec(
      `create table if not exists drm_migrations (version integer primary key, name text not null, applied_at ${big} not null)`,
    );
    const done = new Set((await target.query('select version from drm_migrations')).map((r) => Number(r.version)));
    const pending: Migration[] = migrationsFor(dialect).filter((m) => !done.has(m.version));
    for (const m of pending) {
      if (dialect === 'postgres') await target.exec('begin');
      try {
        await target.exec(m.sql);
        await target.exec(
          `insert into drm_migrations (version, name, applied_at) values (${m.version}, '${m.name.replace(/'/g, "''")}', ${Date.now()})`,
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
