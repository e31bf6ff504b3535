import fs from 'node:fs';
import type { Context } from './context.js';
import { migrationsFor } from './db/migrations/index.js';

export interface Readiness {
  ready: boolean;
  database: 'ok' | 'unreachable';
  /** the newest migration applied, and the newest this build knows */
  migrations: { applied: number; expected: number };
  dataDir: 'writable' | 'not writable';
}

/**
 * GET /ready: whether this server can do its work (a load balancer's check), unlike /health,
 * which says only that the process answers: the database answers, every migration this build
 * knows is applied, and the data directory can be written.
 */
export async function readiness(ctx: Context): Promise<Readiness> {
  const expected = migrationsFor(ctx.db.dialect).at(-1)?.version ?? 0;
  let applied = 0;
  let database: Readiness['database'] = 'ok';
  try {
    applied = await ctx.db.appliedVersion();
    await ctx.repos.organizations.count();
  } catch {
    database = 'unreachable';
  }
  let dataDir: Readiness['dataDir'] = 'writable';
  try {
    fs.accessSync(ctx.config.dataDir, fs.constants.W_OK);
  } catch {
    dataDir = 'not writable';
  }
  return {
    ready: database === 'ok' && applied >= expected && dataDir === 'writable',
    database,
    migrations: { applied, expected },
    dataDir,
  };
}
