import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PgTable } from 'drizzle-orm/pg-core';
import { migrationsFor } from './index.js';
import type { GeneratedStep } from './types.js';

/**
 * Writes the next migration of both dialects from the one table description (`npm run
 * db:generate -- "what changed"`): drizzle-kit diffs the description against the snapshot of
 * the newest migration, for Postgres and for SQLite (whose tables are built from the same
 * description), and the step lands in ./steps with the new snapshots beside it. drizzle-kit is a
 * dev dependency: only this script and the schema tests load it, never the product.
 */

type Kit = typeof import('drizzle-kit/api');
export type PgSnapshot = ReturnType<Kit['generateDrizzleJson']>;
export type SqliteSnapshot = Awaited<ReturnType<Kit['generateSQLiteDrizzleJson']>>;
export interface Snapshots {
  postgres: PgSnapshot;
  sqlite: SqliteSnapshot;
}
export type Description = Record<string, PgTable>;

const kit = (): Promise<Kit> => import('drizzle-kit/api');

/** The description as drizzle-kit sees it, in both dialects. */
export async function snapshotsOf(description: Description): Promise<Snapshots> {
  const { buildSqliteTables } = await import('../schema/sqlite.js');
  const k = await kit();
  return {
    postgres: k.generateDrizzleJson(description),
    sqlite: await k.generateSQLiteDrizzleJson(buildSqliteTables(description)),
  };
}

export async function emptySnapshots(): Promise<Snapshots> {
  return snapshotsOf({});
}

/**
 * The statements that take a database from `from` to `to`, per dialect. SQLite's foreign-key
 * pragmas are left out: the migration runner turns the checks off around every migration (a
 * pragma inside its transaction would do nothing) and checks the keys before it commits.
 */
export async function statementsBetween(
  from: Snapshots,
  to: Snapshots,
): Promise<{ postgres: string[]; sqlite: string[] }> {
  const k = await kit();
  const sqlite = await k.generateSQLiteMigration(from.sqlite, to.sqlite);
  return {
    postgres: await k.generateMigration(from.postgres, to.postgres),
    sqlite: sqlite.filter((s) => !/^\s*pragma\s+foreign_keys\s*=/i.test(s)),
  };
}

export interface MigrationsFolder {
  /** holds steps/ (the generated migrations and their index) and snapshot/ */
  dir: string;
  /** every migration already in the folder, both dialects (for the next version number) */
  existing: GeneratedStep[];
}

export function readSnapshots(dir: string): Snapshots {
  const read = (dialect: string) => JSON.parse(fs.readFileSync(path.join(dir, 'snapshot', `${dialect}.json`), 'utf8'));
  return { postgres: read('postgres'), sqlite: read('sqlite') };
}

function writeSnapshots(dir: string, snapshots: Snapshots): void {
  fs.mkdirSync(path.join(dir, 'snapshot'), { recursive: true });
  for (const dialect of ['postgres', 'sqlite'] as const) {
    fs.writeFileSync(path.join(dir, 'snapshot', `${dialect}.json`), `${JSON.stringify(snapshots[dialect], null, 2)}\n`);
  }
}

/** The file of one step: a module whose default export is the step. */
function stepModule(step: GeneratedStep): string {
  return `// Written by \`npm run db:generate\` from src/db/schema/description.ts. A migration that has run
// somewhere must never change: fix a mistake with a new step.
import type { GeneratedStep } from '../types.js';

const step: GeneratedStep = {
  version: ${step.version},
  name: ${JSON.stringify(step.name)},
  postgres: ${JSON.stringify(step.postgres)},
  sqlite: ${JSON.stringify(step.sqlite)},
};
export default step;
`;
}

/** steps/index.ts lists every step file in version order (the file names start with the version). */
function writeStepIndex(stepsDir: string): void {
  const files = fs
    .readdirSync(stepsDir)
    .filter((f) => /^\d{4}-.*\.ts$/.test(f))
    .sort();
  const ids = files.map((f) => `step${f.slice(0, 4)}`);
  const imports = files.map((f, i) => `import ${ids[i]} from './${f.replace(/\.ts$/, '.js')}';\n`).join('');
  fs.writeFileSync(
    path.join(stepsDir, 'index.ts'),
    `// Written by \`npm run db:generate\`: the generated migrations, oldest first.
import type { GeneratedStep } from '../types.js';
${imports}
export const generatedSteps: GeneratedStep[] = [${ids.join(', ')}];
`,
  );
}

/** The file name's words: lower case, dashes between, cut after a whole word within 40 characters. */
function slug(name: string): string {
  const words = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
  const cut = words.length <= 40 ? words : words.slice(0, words.lastIndexOf('-', 40));
  return cut || words.slice(0, 40) || 'step';
}

/**
 * Diffs the description against the folder's snapshots and writes the next step; null when the
 * description has not changed since the newest migration (nothing is written then).
 */
export async function generateStep(
  name: string,
  description: Description,
  folder: MigrationsFolder,
): Promise<GeneratedStep | null> {
  const before = readSnapshots(folder.dir);
  const after = await snapshotsOf(description);
  const sql = await statementsBetween(before, after);
  if (sql.postgres.length === 0 && sql.sqlite.length === 0) return null;
  const version = Math.max(0, ...migrationsFor('postgres', folder.existing).map((m) => m.version)) + 1;
  const step: GeneratedStep = { version, name, postgres: sql.postgres.join('\n'), sqlite: sql.sqlite.join('\n') };
  const stepsDir = path.join(folder.dir, 'steps');
  fs.mkdirSync(stepsDir, { recursive: true });
  fs.writeFileSync(path.join(stepsDir, `${String(version).padStart(4, '0')}-${slug(name)}.ts`), stepModule(step));
  writeStepIndex(stepsDir);
  writeSnapshots(folder.dir, after);
  return step;
}

/** `npm run db:generate -- "what changed"`, run from the repository root. */
async function main(): Promise<void> {
  const name = process.argv.slice(2).join(' ').trim();
  if (!name) {
    console.error('usage: npm run db:generate -- "what the migration changes"');
    process.exitCode = 2;
    return;
  }
  const [tables, { generatedSteps }] = await Promise.all([
    import('../schema/description.js'),
    import('./steps/index.js'),
  ]);
  const dir = path.dirname(fileURLToPath(import.meta.url));
  const step = await generateStep(name, tables as unknown as Description, { dir, existing: generatedSteps });
  if (!step) console.log('db:generate: the schema matches the newest migration; nothing written');
  else {
    // written as the house formats code, so that the format check passes on what was generated
    const biome = path.resolve(dir, '../../../node_modules/.bin/biome');
    execFileSync(biome, ['format', '--write', path.join(dir, 'steps')], { stdio: 'ignore' });
    console.log(
      `db:generate: wrote migration ${step.version} (${step.name}) ` +
        `to ${path.relative(process.cwd(), path.join(dir, 'steps'))}`,
    );
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) await main();
