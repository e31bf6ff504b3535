import { pgMigrations } from './pg.js';
import { sqliteMigrations } from './sqlite.js';

/** One migration per step, numbered; the same numbers exist for both dialects. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const migrationsFor = (dialect: 'sqlite' | 'postgres'): Migration[] =>
  dialect === 'sqlite' ? sqliteMigrations : pgMigrations;
