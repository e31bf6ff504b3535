import { postgresHistory } from './history/postgres.js';
import { sqliteHistory } from './history/sqlite.js';
import { generatedSteps } from './steps/index.js';
import type { Dialect, GeneratedStep, Migration } from './types.js';

export type { Dialect, GeneratedStep, Migration } from './types.js';

export function migrationsFor(dialect: Dialect, steps: readonly GeneratedStep[] = generatedSteps): Migration[] {
  const history = dialect === 'sqlite' ? sqliteHistory : postgresHistory;
  return [...history, ...steps.map(({ version, name, ...sql }) => ({ version, name, sql: sql[dialect] }))];
}
