import BetterSqlite from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { migrate, postgresMigrationTarget, sqliteMigrationTarget } from '../../src/db/migrate.js';
import { migrationsFor } from '../../src/db/migrations/index.js';
import { DIALECTS, freshDatabaseUrl } from '../helpers/context.js';

// Content packaged before segment rules were keyed was served by the fixed rule (bit s mod 40), and
// a leak of it must be read by that rule: migration 23 records 'fixed' on every row it finds, while
// content packaged afterwards takes the keyed rule. Both were cut in 10-s segments, which
// migration 24 records (segment_seconds) until ingest asks for another length.

const insert = (id: string, watermarked: string) =>
  `insert into content (id, title, type, duration_ms, is_watermarked, segment_count, status, created_at) ` +
  `values ('${id}', 't', 'video', 10000, ${watermarked}, 1, 'ready', 0)`;

describe.each(DIALECTS)('migrations 23 and 24 on %s', (dialect) => {
  it('records the fixed rule on the content that existed before it, and the keyed one on content added after, each in 10-s segments', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-m23-'));
    const url = await freshDatabaseUrl(dialect, dir);
    const before = migrationsFor(dialect).filter((m) => m.version < 23);
    const yes = dialect === 'sqlite' ? '1' : 'true';
    const rules = 'select id, segment_rule, segment_seconds from content order by id';
    if (dialect === 'sqlite') {
      const db = new BetterSqlite(url.replace(/^sqlite:/, ''));
      await migrate('sqlite', sqliteMigrationTarget(db), { migrations: before });
      db.exec(insert('old', yes));
      await migrate('sqlite', sqliteMigrationTarget(db));
      db.exec(insert('new', yes));
      expect(db.prepare(rules).all()).toEqual([
        { id: 'new', segment_rule: 'keyed', segment_seconds: 10 },
        { id: 'old', segment_rule: 'fixed', segment_seconds: 10 },
      ]);
      db.close();
    } else {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await migrate('postgres', postgresMigrationTarget(client), { migrations: before });
      await client.query(insert('old', yes));
      await migrate('postgres', postgresMigrationTarget(client));
      await client.query(insert('new', yes));
      expect((await client.query(rules)).rows).toEqual([
        { id: 'new', segment_rule: 'keyed', segment_seconds: 10 },
        { id: 'old', segment_rule: 'fixed', segment_seconds: 10 },
      ]);
      await client.end();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
