import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import { integer, pgTable, text, index } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.js';
import {
  emptySnapshots,
  generateStep,
  readSnapshots,
  snapshotsOf,
  statementsBetween,
  type Description,
} from '../../src/db/migrations/generate.js';
import { type Dialect, migrationsFor } from '../../src/db/migrations/index.js';
import { migrate, type MigrationTarget, postgresMigrationTarget, sqliteMigrationTarget } from '../../src/db/migrate.js';
import * as tables from '../../src/db/schema/description.js';
import { createLogger } from '../../src/log.js';
import { DIALECTS, type DialectName, freshDatabaseUrl } from '../helpers/context.js';
import { type Catalog, inCommonTypes, postgresCatalog, sqliteCatalog } from '../helpers/schema-catalog.js';

// The one table description (src/db/schema/tables.ts), the migrations and the two dialects must
// agree; each test below fails when one of them drifts.

const description = tables as unknown as Description;
const MIGRATIONS_DIR = path.resolve(__dirname, '../../src/db/migrations');
const dialectOf = (d: DialectName): Dialect => (d === 'sqlite' ? 'sqlite' : 'postgres');

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-schema-'));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A connection the migration runner can use, and the database's catalog afterwards. */
async function withTarget<T>(
  dialect: DialectName,
  url: string,
  fn: (target: MigrationTarget, exec: (sql: string) => Promise<void>) => Promise<T>,
): Promise<T> {
  if (dialect === 'sqlite') {
    const db = new Sqlite(url.slice('sqlite:'.length));
    try {
      return await fn(sqliteMigrationTarget(db), async (sql) => void db.exec(sql));
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(postgresMigrationTarget(client), async (sql) => void (await client.query(sql)));
  } finally {
    await client.end();
  }
}

const catalogOf = (dialect: DialectName, url: string): Promise<Catalog> =>
  dialect === 'sqlite' ? Promise.resolve(sqliteCatalog(url.slice('sqlite:'.length))) : postgresCatalog(url);

async function freshUrl(dialect: DialectName): Promise<string> {
  return freshDatabaseUrl(dialect, fs.mkdtempSync(path.join(dir, `${dialect}-`)));
}

/** A database made straight from the description: drizzle-kit's statements from nothing. */
async function describedDatabase(dialect: DialectName, d: Description = description): Promise<string> {
  const url = await freshUrl(dialect);
  const sql = await statementsBetween(await emptySnapshots(), await snapshotsOf(d));
  await withTarget(dialect, url, (_, exec) => exec(sql[dialectOf(dialect)].join('\n')));
  return url;
}

async function migratedDatabase(dialect: DialectName): Promise<string> {
  const url = await freshUrl(dialect);
  await withTarget(dialect, url, (target) => migrate(dialectOf(dialect), target));
  return url;
}

describe('the one table description', () => {
  it('has no change that the newest migration lacks (run `npm run db:generate` after editing it)', async () => {
    const pending = await statementsBetween(readSnapshots(MIGRATIONS_DIR), await snapshotsOf(description));
    expect(pending).toEqual({ postgres: [], sqlite: [] });
  });

  it('numbers the migrations of both dialects alike', () => {
    const versions = (d: Dialect) => migrationsFor(d).map((m) => [m.version, m.name]);
    expect(versions('sqlite')).toEqual(versions('postgres'));
  });
});

describe.each(DIALECTS)('migrations on %s', (dialect) => {
  it('produce exactly the described schema: columns, types, nullability, defaults, indexes, foreign keys', async () => {
    const [migrated, described] = await Promise.all([migratedDatabase(dialect), describedDatabase(dialect)]);
    const catalog = await catalogOf(dialect, migrated);
    expect(Object.keys(catalog).sort()).toEqual(Object.keys(await catalogOf(dialect, described)).sort());
    expect(catalog).toEqual(await catalogOf(dialect, described));
  }, 60_000);
});

describe('the two dialects', () => {
  it('agree table for table once migrated: the same columns, nullability, defaults, keys and indexes, types in SQLite storage classes', async () => {
    const [sqlite, postgres] = await Promise.all([migratedDatabase('sqlite'), migratedDatabase('postgres')]);
    const [a, b] = [
      inCommonTypes(await catalogOf('sqlite', sqlite)),
      inCommonTypes(await catalogOf('postgres', postgres)),
    ];
    expect(Object.keys(a).length).toBeGreaterThanOrEqual(11);
    expect(a).toEqual(b);
  }, 60_000);
});

/** The previous release's database: the hand-written migrations up to `upTo`, with a session in it. */
async function previousReleaseDatabase(dialect: DialectName, upTo: number): Promise<string> {
  const url = await freshUrl(dialect);
  const older = migrationsFor(dialectOf(dialect)).filter((m) => m.version <= upTo);
  const yes = dialect === 'sqlite' ? 1 : 'true';
  await withTarget(dialect, url, async (target, exec) => {
    await migrate(dialectOf(dialect), target, { migrations: older });
    await exec(`insert into organizations (id, name, wallet_address, signing_algorithm, webhook_secret_sealed, plan, is_active, apusd_balance_micro, created_at)
      values ('org-1', 'Old Films', '0x${'1'.repeat(40)}', 'RS256', 'sealed', 'paid', ${yes}, 5000000, 1700000000000)`);
    await exec(`insert into viewers (id, organization_id, external_viewer_id, binary_id, wallet_address, has_own_wallet, total_streams, is_blocked, first_seen, last_seen)
      values ('viewer-1', 'org-1', 'alice', '${'01'.repeat(20)}', '0x${'2'.repeat(40)}', ${yes}, 1, ${yes === 1 ? 0 : 'false'}, 1700000000000, 1700000000000)`);
    await exec(`insert into stream_sessions (id, organization_id, api_key_id, content_id, viewer_id, is_active, bytes_served, expires_at, created_at)
      values ('session-1', 'org-1', 'key-1', 'content-1', 'viewer-1', ${yes}, 1234, 1700000900000, 1700000000000)`);
  });
  return url;
}

describe.each(DIALECTS)('a database of the previous release on %s', (dialect) => {
  it('migrates forward when drm opens it, keeps its rows, and ends with the described schema', async () => {
    const url = await previousReleaseDatabase(dialect, 4);
    const db = await openDatabase(url, { log: createLogger('silent') });
    try {
      expect(await db.appliedVersion()).toBe(Math.max(...migrationsFor(dialectOf(dialect)).map((m) => m.version)));
      const session = await db.repos.sessions.find('session-1');
      // migration 7 added `watermarked`; a session from before it was served marked
      expect(session).toMatchObject({
        organizationId: 'org-1',
        viewerId: 'viewer-1',
        bytesServed: 1234,
        isActive: true,
        watermarked: true,
      });
      expect((await db.repos.organizations.find('org-1'))?.apusdBalanceMicro).toBe(5_000_000);
    } finally {
      await db.close();
    }
    expect(await catalogOf(dialect, url)).toEqual(await catalogOf(dialect, await describedDatabase(dialect)));
  }, 60_000);
});

describe('npm run db:generate', () => {
  const shelves1 = pgTable('shelves', { id: text('id').primaryKey(), label: text('label') });
  const books1 = pgTable('books', {
    id: text('id').primaryKey(),
    shelfId: text('shelf_id')
      .notNull()
      .references(() => shelves1.id),
    title: text('title').notNull(),
  });
  const v1: Description = { shelves: shelves1, books: books1 };
  // One edit: a column and its index on books, and shelves.label made required (SQLite copies
  // the table that books refers to, which the runner's foreign-key handling must survive).
  const shelves2 = pgTable('shelves', { id: text('id').primaryKey(), label: text('label').notNull() });
  const books2 = pgTable(
    'books',
    {
      id: text('id').primaryKey(),
      shelfId: text('shelf_id')
        .notNull()
        .references(() => shelves2.id),
      title: text('title').notNull(),
      rating: integer('rating'),
    },
    (t) => [index('books_rating').on(t.rating)],
  );
  const v2: Description = { shelves: shelves2, books: books2 };

  it.each(DIALECTS)(
    'writes a step that carries a database with rows from one description to the next (%s)',
    async (dialect) => {
      const folder = fs.mkdtempSync(path.join(dir, 'generated-'));
      fs.mkdirSync(path.join(folder, 'snapshot'));
      const empty = await emptySnapshots();
      for (const d of ['postgres', 'sqlite'] as const)
        fs.writeFileSync(path.join(folder, 'snapshot', `${d}.json`), JSON.stringify(empty[d]));

      const first = await generateStep('shelves and books', v1, { dir: folder, existing: [] });
      const second = await generateStep('rating on books, shelf labels required', v2, {
        dir: folder,
        existing: first ? [first] : [],
      });
      expect([first?.version, second?.version]).toEqual([8, 9]);
      expect(await generateStep('nothing', v2, { dir: folder, existing: [] })).toBeNull();
      expect(fs.readdirSync(path.join(folder, 'steps')).sort()).toEqual([
        '0008-shelves-and-books.ts',
        '0009-rating-on-books-shelf-labels-required.ts',
        'index.ts',
      ]);
      expect(fs.readFileSync(path.join(folder, 'steps', 'index.ts'), 'utf8')).toContain('[step0008, step0009]');

      const steps = [first, second].map((s) => ({
        version: s?.version ?? 0,
        name: s?.name ?? '',
        sql: s?.[dialectOf(dialect)] ?? '',
      }));
      const url = await freshUrl(dialect);
      await withTarget(dialect, url, async (target, exec) => {
        expect(await migrate(dialectOf(dialect), target, { migrations: steps.slice(0, 1) })).toBe(1);
        await exec("insert into shelves (id, label) values ('s1', 'fiction')");
        await exec("insert into books (id, shelf_id, title) values ('b1', 's1', 'Dune')");
        expect(await migrate(dialectOf(dialect), target, { migrations: steps })).toBe(1);
        expect(await target.query('select id, shelf_id, title, rating from books')).toEqual([
          { id: 'b1', shelf_id: 's1', title: 'Dune', rating: null },
        ]);
      });
      expect(await catalogOf(dialect, url)).toEqual(await catalogOf(dialect, await describedDatabase(dialect, v2)));
    },
    60_000,
  );
});
