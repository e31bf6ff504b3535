import BetterSqlite from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate, postgresMigrationTarget, sqliteMigrationTarget } from '../../src/db/migrate.js';
import { migrationsFor } from '../../src/db/migrations/index.js';
import { candidatesOf } from '../../src/domain/forensics/analyze.js';
import { binaryIdAt } from '../../src/domain/forensics/matching/packed-ids.js';
import { DIALECTS, freshDatabaseUrl, makeTestApp, type TestApp } from '../helpers/context.js';
import { contentRule } from '../../src/domain/content-rule.js';
import { variantFor } from '../../src/watermark/segments.js';
import { addContent, registerOrg } from '../helpers/fixtures.js';

// A leak's candidates are every viewer who streamed the item marked, read from the database a
// page at a time and packed as they come (a million of them without a million row
// objects). The pages must add up to exactly that set, whatever the page size.

// leading zeros on purpose: the session holds the number the id spells, and it must come back whole
const idOf = (k: number) => (k + 1).toString(2).padStart(40, '0');

describe.each(DIALECTS)("a leak's candidates on %s", (dialect) => {
  let t: TestApp;
  let organizationId: string;
  let contentId: string;
  const expected = new Map<string, string>();

  async function viewerWithSessions(
    k: number,
    sessions: { contentId: string; watermarked: boolean; copiedBits?: false }[],
  ): Promise<string> {
    const id = randomUUID();
    const now = t.clock.now();
    await t.ctx.repos.viewers.insert({
      id,
      organizationId,
      externalViewerId: `viewer-${k}`,
      binaryId: idOf(k),
      walletAddress: `0x${'3'.repeat(40)}`,
      walletIndex: null,
      hasOwnWallet: true,
      email: null,
      totalStreams: sessions.length,
      isBlocked: false,
      blockedReason: null,
      firstSeen: now,
      lastSeen: now,
    });
    for (const s of sessions) {
      await t.ctx.repos.sessions.insert({
        id: randomUUID(),
        organizationId,
        apiKeyId: 'key-1',
        contentId: s.contentId,
        viewerId: id,
        ipAddress: null,
        userAgent: null,
        isActive: false,
        bytesServed: 0,
        expiresAt: now,
        createdAt: now,
        watermarked: s.watermarked,
        pricePerStreamMicro: null,
        viewerBits: s.copiedBits === false ? null : Number.parseInt(idOf(k), 2),
      });
    }
    return id;
  }

  beforeAll(async () => {
    t = await makeTestApp(dialect);
    organizationId = (await registerOrg(t)).organizationId;
    contentId = (await addContent(t)).id;
    const other = (await addContent(t, { title: 'Another film' })).id;
    for (let k = 0; k < 23; k++) {
      // some viewers came back (three sessions of the item), some also watched another item
      const sessions = [
        { contentId, watermarked: true },
        ...(k % 3 === 0
          ? [
              { contentId, watermarked: true },
              { contentId, watermarked: true },
            ]
          : []),
        ...(k % 4 === 0 ? [{ contentId: other, watermarked: true }] : []),
      ];
      expected.set(await viewerWithSessions(k, sessions), idOf(k));
    }
    await viewerWithSessions(100, [{ contentId: other, watermarked: true }]);
  });
  afterAll(() => t.close());

  const asMap = (c: Awaited<ReturnType<typeof candidatesOf>>) =>
    new Map(c.viewerIds.map((v, i) => [v, binaryIdAt(c.packed, i)]));

  it.each([1, 2, 5, 22, 23, 50_000])(
    'read %i at a time, they are each marked viewer of the item once, with their ids',
    async (pageSize) => {
      const found = await candidatesOf(t.ctx, { id: contentId, segmentRule: 'keyed' }, pageSize);
      expect(found.viewerIds).toHaveLength(23);
      expect(found.packed).toHaveLength(23 * 5);
      expect(asMap(found)).toEqual(expected);
    },
  );

  it('an item with a session served unmarked adds first one candidate whose id its rule serves as A throughout, and its viewer only for a marked session', async () => {
    const item = await addContent(t, { title: 'Partly unmarked' });
    const marked = await viewerWithSessions(200, [
      { contentId: item.id, watermarked: true },
      { contentId: item.id, watermarked: false },
    ]);
    await viewerWithSessions(201, [{ contentId: item.id, watermarked: false }]);
    const found = await candidatesOf(t.ctx, item, 1);
    expect(found.viewerIds).toEqual(['unmarked-sessions', marked]);
    const standIn = binaryIdAt(found.packed, 0);
    const rule = contentRule(t.ctx, item);
    expect(Array.from({ length: 80 }, (_, s) => variantFor(standIn, s, rule))).toEqual(new Array(80).fill('A'));
    expect(standIn).not.toBe('0'.repeat(40));
    expect(binaryIdAt(found.packed, 1)).toBe(idOf(200));
  });

  it('under the fixed rule of older content, that candidate is all zeros', async () => {
    const item = await addContent(t, { title: 'Ingested before keyed rules', segmentRule: 'fixed' });
    await viewerWithSessions(210, [{ contentId: item.id, watermarked: false }]);
    const found = await candidatesOf(t.ctx, item, 1);
    expect(binaryIdAt(found.packed, 0)).toBe('0'.repeat(40));
  });

  it("a session an older server made without its viewer's bits still names the viewer with them", async () => {
    const item = (await addContent(t, { title: 'Streamed during an upgrade' })).id;
    const before = await viewerWithSessions(300, [{ contentId: item, watermarked: true, copiedBits: false }]);
    const both = await viewerWithSessions(301, [
      { contentId: item, watermarked: true, copiedBits: false },
      { contentId: item, watermarked: true },
    ]);
    const found = asMap(await candidatesOf(t.ctx, { id: item, segmentRule: 'keyed' }, 1));
    expect(found).toEqual(
      new Map([
        [before, idOf(300)],
        [both, idOf(301)],
      ]),
    );
  });

  it('an item nobody streamed has no candidates', async () => {
    const found = await candidatesOf(t.ctx, { id: randomUUID(), segmentRule: 'keyed' }, 2);
    expect(found.viewerIds).toEqual([]);
    expect(found.packed).toHaveLength(0);
  });
});

describe.each(DIALECTS)('migration 18 on %s', (dialect) => {
  it("gives each existing session its viewer's bits, the number its binaryId spells in base 2", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-m18-'));
    const binaryId = '1011001110001111000010101100110011110001';
    const url = await freshDatabaseUrl(dialect, dir);
    const upTo17 = migrationsFor(dialect).filter((m) => m.version < 18);
    const rows = [
      `insert into organizations (id, name, wallet_address, signing_algorithm, webhook_secret_sealed, plan, is_active, apusd_balance_micro, created_at, autopay_enabled) values ('o', 'n', '0x0', 'RS256', 'x', 'paid', ${dialect === 'sqlite' ? 1 : true}, 0, 0, ${dialect === 'sqlite' ? 0 : false})`,
      `insert into viewers (id, organization_id, external_viewer_id, binary_id, wallet_address, has_own_wallet, total_streams, is_blocked, first_seen, last_seen) values ('v', 'o', 'e', '${binaryId}', '0x0', ${dialect === 'sqlite' ? 0 : false}, 1, ${dialect === 'sqlite' ? 0 : false}, 0, 0)`,
      `insert into stream_sessions (id, organization_id, api_key_id, content_id, viewer_id, is_active, bytes_served, expires_at, created_at) values ('s', 'o', 'k', 'c', 'v', ${dialect === 'sqlite' ? 0 : false}, 0, 0, 0)`,
    ];
    if (dialect === 'sqlite') {
      const db = new BetterSqlite(url.replace(/^sqlite:/, ''));
      await migrate('sqlite', sqliteMigrationTarget(db), { migrations: upTo17 });
      for (const row of rows) db.exec(row);
      expect(await migrate('sqlite', sqliteMigrationTarget(db))).toBe(migrationsFor('sqlite').length - upTo17.length);
      expect(db.prepare('select viewer_bits from stream_sessions').all()).toEqual([
        { viewer_bits: 0b1011001110001111000010101100110011110001 },
      ]);
      db.close();
    } else {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      await migrate('postgres', postgresMigrationTarget(client), { migrations: upTo17 });
      for (const row of rows) await client.query(row);
      await migrate('postgres', postgresMigrationTarget(client));
      const bits = (await client.query('select viewer_bits from stream_sessions')).rows;
      expect(bits.map((r) => Number(r.viewer_bits))).toEqual([0b1011001110001111000010101100110011110001]);
      await client.end();
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
