import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrationsFor } from '../../src/db/migrations/index.js';
import { runDrm } from '../helpers/serve-process.js';
import { newId } from '../../src/crypto/tokens.js';
import type { OrganizationRow } from '../../src/db/repos/index.js';
import { DIALECTS, freshDatabaseUrl, makeTestApp, type TestApp } from '../helpers/context.js';

// One repository contract, run against both dialects: what the services rely on.

function orgRow(t: TestApp, fields: Partial<OrganizationRow> = {}): OrganizationRow {
  return {
    id: newId(),
    name: 'Contract Org',
    email: null,
    walletAddress: '0x2222222222222222222222222222222222222222',
    walletIndex: null,
    signingPublicKey: null,
    signingAlgorithm: 'RS256',
    webhookUrl: null,
    webhookSecretSealed: 'sealed',
    plan: 'paid',
    isActive: true,
    suspendedReason: null,
    suspendedAt: null,
    apusdBalanceMicro: 123_456_789,
    rateLimitPerHour: null,
    monthlyStreamLimit: null,
    lastRotationAt: null,
    createdAt: t.clock.now(),
    autopayEnabled: false,
    autopayMethod: null,
    fiatCustomerId: null,
    billingTerms: null,
    watermarkPassUntil: null,
    depositAddress: null,
    negativeSince: null,
    ...fields,
  };
}

/** A second connection to the test database that runs SQL as an operator at a console would. */
async function rawConnection(
  url: string,
): Promise<((statement: string) => Promise<void>) & { close(): Promise<void> }> {
  if (url.startsWith('sqlite:')) {
    const db = new Sqlite(url.slice('sqlite:'.length));
    db.pragma('busy_timeout = 15000');
    return Object.assign(async (statement: string) => void db.exec(statement), { close: async () => void db.close() });
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return Object.assign(async (statement: string) => void (await client.query(statement)), {
    close: () => client.end(),
  });
}

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
};

describe.each(DIALECTS)('migrations on %s', (dialect) => {
  it('several processes migrating one empty database at once all succeed, and it is migrated once', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-migrate-'));
    const url = await freshDatabaseUrl(dialect, dir);
    try {
      const runs = await Promise.all(
        Array.from({ length: 4 }, () => runDrm(['migrate', '--db', url, '--data-dir', dir, '--json'])),
      );
      for (const r of runs) expect(r.code, r.stderr).toBe(0);
      const applied = runs.map((r) => JSON.parse(r.stdout).applied as number).sort();
      // a count, not the latest version: versions are handed out per change and may leave gaps
      expect(applied).toEqual([0, 0, 0, migrationsFor(dialect === 'sqlite' ? 'sqlite' : 'postgres').length]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe.each(DIALECTS)('repository contract on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
  });
  afterAll(() => t.close());

  it('applies migrations once: a second run finds nothing to do', async () => {
    expect(await t.ctx.db.migrate()).toBe(0);
  });

  it('reads back booleans, JSON, large integers and nulls as written', async () => {
    const row = orgRow(t, { isActive: false, apusdBalanceMicro: 9_007_199_254_740, walletIndex: 7 });
    await t.ctx.repos.organizations.insert(row);
    expect(await t.ctx.repos.organizations.find(row.id)).toEqual(row);
    await t.ctx.repos.apiKeys.insert({
      id: newId(),
      organizationId: row.id,
      name: 'k',
      prefix: 'drm_live_abc',
      keyHash: `h-${row.id}`,
      scopes: ['catalog', 'forensics'],
      rateLimitPerHour: null,
      revokedAt: null,
      createdAt: 1,
    });
    const found = await t.ctx.repos.apiKeys.findByHash(`h-${row.id}`);
    expect(found?.key.scopes).toEqual(['catalog', 'forensics']);
    expect(found?.org).toEqual(row);
  });

  it('a transaction that throws leaves nothing behind', async () => {
    const row = orgRow(t);
    await expect(
      t.ctx.db.transaction(async (tx) => {
        await tx.repos.organizations.insert(row);
        expect(await tx.repos.organizations.find(row.id)).toBeDefined();
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await t.ctx.repos.organizations.find(row.id)).toBeUndefined();
  });

  it('a transaction inside a transaction joins it', async () => {
    const a = orgRow(t);
    const b = orgRow(t);
    await expect(
      t.ctx.db.transaction(async (tx) => {
        await tx.repos.organizations.insert(a);
        await tx.db.transaction(async (inner) => inner.repos.organizations.insert(b));
        throw new Error('roll back both');
      }),
    ).rejects.toThrow();
    expect(await t.ctx.repos.organizations.find(a.id)).toBeUndefined();
    expect(await t.ctx.repos.organizations.find(b.id)).toBeUndefined();
  });

  it('hands its function a context bound to it: the same config, clock and keys, its own repos and db', async () => {
    const row = orgRow(t);
    await t.ctx.db.transaction(async (tx) => {
      expect(tx).not.toBe(t.ctx);
      expect([tx.config, tx.clock, tx.keys, tx.storage]).toEqual([
        t.ctx.config,
        t.ctx.clock,
        t.ctx.keys,
        t.ctx.storage,
      ]);
      expect(tx.repos).not.toBe(t.ctx.repos);
      await tx.repos.organizations.insert(row);
    });
    expect(await t.ctx.repos.organizations.find(row.id)).toEqual(row);
  });

  it("runs a transaction's afterCommit work once it has committed, never after a rollback, with the caller's context", async () => {
    const ran: string[] = [];
    const quiet = t.ctx.derive({ log: t.ctx.log });
    await quiet.db.transaction(async (tx) => {
      expect(tx.log).toBe(quiet.log);
      await tx.db.transaction(async (inner) => inner.afterCommit(() => ran.push('inner')));
      tx.afterCommit(() => ran.push('outer'));
      expect(ran).toEqual([]);
    });
    expect(ran).toEqual(['inner', 'outer']);
    await expect(
      t.ctx.db.transaction(async (tx) => {
        tx.afterCommit(() => ran.push('rolled back'));
        throw new Error('no commit');
      }),
    ).rejects.toThrow('no commit');
    t.ctx.afterCommit(() => ran.push('outside'));
    expect(ran).toEqual(['inner', 'outer', 'outside']);
  });

  it('refuses the outer handle inside a transaction with a clear error instead of hanging, and rolls back', async () => {
    const row = orgRow(t);
    const outerRead = t.ctx.db.transaction(async (tx) => {
      await tx.repos.organizations.insert(row);
      await t.ctx.repos.organizations.find(row.id);
    });
    await expect(outerRead).rejects.toThrow(
      /repos\.organizations\.find\(\) of the outer database handle was used inside a transaction/,
    );
    const outerTransaction = t.ctx.db.transaction(async () => t.ctx.db.transaction(async () => undefined));
    await expect(outerTransaction).rejects.toThrow(
      /db\.transaction\(\) of the outer database handle was used inside a transaction/,
    );
    expect(await t.ctx.repos.organizations.find(row.id)).toBeUndefined();
    // the database serves the next caller at once
    await t.ctx.db.transaction((tx) => tx.repos.organizations.insert(row));
    expect(await t.ctx.repos.organizations.find(row.id)).toBeDefined();
  }, 10_000);

  /** A transaction that has inserted `inside` and stays open until release() is resolved, then throws 'abort'. */
  async function openTransactionThatAborts(inside: ReturnType<typeof orgRow>) {
    const opened = deferred();
    const release = deferred();
    const tx = t.ctx.db.transaction(async (tx) => {
      await tx.repos.organizations.insert(inside);
      opened.resolve();
      await release.promise;
      throw new Error('abort');
    });
    await opened.promise;
    return { tx, release };
  }

  it('a write made outside a transaction while one is open is not rolled back with it', async () => {
    const inside = orgRow(t);
    const outside = orgRow(t);
    const { tx, release } = await openTransactionThatAborts(inside);
    const outsideWrite = t.ctx.repos.organizations.insert(outside);
    release.resolve();
    await expect(tx).rejects.toThrow('abort');
    await outsideWrite;
    expect(await t.ctx.repos.organizations.find(inside.id)).toBeUndefined();
    expect(await t.ctx.repos.organizations.find(outside.id)).toBeDefined();
  });

  it('several statements made outside while a transaction is open all run once it ends, none inside it', async () => {
    const inside = orgRow(t);
    const outside = [orgRow(t), orgRow(t), orgRow(t)];
    const { tx, release } = await openTransactionThatAborts(inside);
    // Two or more waiting at once used to hand SQLite's lock back and forth forever (a spinning server).
    const writes = outside.map((r) => t.ctx.repos.organizations.insert(r));
    const reads = outside.map((r) => t.ctx.repos.organizations.find(r.id));
    const later = t.ctx.db.transaction((tx) => tx.repos.organizations.find(inside.id));
    release.resolve();
    await expect(tx).rejects.toThrow('abort');
    await Promise.all([...writes, ...reads]);
    expect(await later).toBeUndefined();
    for (const r of outside) expect(await t.ctx.repos.organizations.find(r.id)).toBeDefined();
  }, 10_000);

  it('hands out distinct counter numbers from blocks: 100 concurrent callers outside and 100 in a transaction never share one', async () => {
    const outside = Promise.all(Array.from({ length: 100 }, () => t.ctx.repos.counters.distinct('contract-blocks')));
    const inside = t.ctx.db.transaction((tx) =>
      Promise.all(Array.from({ length: 100 }, () => tx.repos.counters.distinct('contract-blocks'))),
    );
    const numbers = [...(await outside), ...(await inside)];
    expect(new Set(numbers).size).toBe(200);
    expect(numbers.every((n) => Number.isSafeInteger(n) && n >= 0)).toBe(true);
  });

  it('concurrent transactions both commit', async () => {
    const rows = [orgRow(t), orgRow(t), orgRow(t)];
    await Promise.all(
      rows.map((r) =>
        t.ctx.db.transaction(async (tx) => {
          await tx.repos.organizations.insert(r);
          await tx.repos.organizations.update(r.id, { name: `renamed ${r.id}` });
        }),
      ),
    );
    for (const r of rows) expect((await t.ctx.repos.organizations.find(r.id))?.name).toBe(`renamed ${r.id}`);
  });

  it('counts rate-limit hits atomically under concurrency', async () => {
    const window = 3_600_000 * 1000;
    const counts = await Promise.all(Array.from({ length: 40 }, () => t.ctx.repos.rateCounters.hit('org:x', window)));
    expect(counts.sort((p, q) => p - q)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(await t.ctx.repos.rateCounters.hit('key:y', window)).toBe(1);
    expect(await t.ctx.repos.rateCounters.hit('org:x', window + 3_600_000)).toBe(1);
    await t.ctx.repos.rateCounters.prune(window + 1);
    expect(await t.ctx.repos.rateCounters.hit('org:x', window)).toBe(1);
  });

  it('prepared queries see writes made inside a transaction once it commits, and not after a rollback', async () => {
    const row = orgRow(t);
    await t.ctx.repos.organizations.insert(row);
    const key = {
      id: newId(),
      organizationId: row.id,
      name: 'k',
      prefix: 'drm_live_pre',
      keyHash: `p-${row.id}`,
      scopes: ['catalog'],
      rateLimitPerHour: null,
      revokedAt: null,
      createdAt: 1,
    };
    expect(await t.ctx.repos.apiKeys.findByHash(key.keyHash)).toBeUndefined();
    await expect(
      t.ctx.db.transaction(async (tx) => {
        await tx.repos.apiKeys.insert(key);
        expect((await tx.repos.apiKeys.findByHash(key.keyHash))?.key.id).toBe(key.id);
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect(await t.ctx.repos.apiKeys.findByHash(key.keyHash)).toBeUndefined();
    await t.ctx.db.transaction((tx) => tx.repos.apiKeys.insert(key));
    expect((await t.ctx.repos.apiKeys.findByHash(key.keyHash))?.key.id).toBe(key.id);
  });

  it('a nonce is consumed by exactly one of many concurrent callers, and never after it expires', async () => {
    await t.ctx.repos.admins.addNonce('n-once', 2_000);
    const wins = await Promise.all(Array.from({ length: 10 }, () => t.ctx.repos.admins.consumeNonce('n-once', 1_000)));
    expect(wins.filter(Boolean)).toHaveLength(1);
    await t.ctx.repos.admins.addNonce('n-old', 2_000);
    expect(await t.ctx.repos.admins.consumeNonce('n-old', 2_000)).toBe(false);
  });

  it('housekeeping deletes expired nonces and keeps live ones', async () => {
    await t.ctx.repos.admins.addNonce('n-live', 10_000);
    await t.ctx.repos.admins.addNonce('n-dead', 5_000);
    await t.ctx.repos.admins.pruneNonces(6_000);
    expect(await t.ctx.repos.admins.consumeNonce('n-dead', 1_000)).toBe(false);
    expect(await t.ctx.repos.admins.consumeNonce('n-live', 6_000)).toBe(true);
  });

  it('pages licensed content right for any page shape, beyond the 64 prepared page statements kept', async () => {
    const org = orgRow(t);
    await t.ctx.repos.organizations.insert(org);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = newId();
      ids.push(id);
      await t.ctx.repos.content.insert({
        id,
        title: `c${i}`,
        description: null,
        type: 'music',
        duration: 1000,
        resolution: null,
        isWatermarked: false,
        segmentCount: 1,
        storagePath: null,
        status: 'ready',
        createdAt: 10_000 + i,
      });
    }
    await t.ctx.repos.licenses.upsert({
      id: newId(),
      organizationId: org.id,
      contentId: '*',
      contentType: 'music',
      licenseScope: 'all',
      watermarkingEnabled: false,
      pricePerStreamMicro: 0,
      isActive: true,
      createdAt: 1,
    });
    for (let offset = 0; offset < 70; offset++) {
      const rows = await t.ctx.repos.content.listLicensed(org.id, { limit: 1, offset });
      expect(rows.map((r) => r.id)).toEqual(offset < 5 ? [ids[offset]] : []);
    }
    const all = await t.ctx.repos.content.listLicensed(org.id, { limit: 1, offset: 0 });
    expect(all.map((r) => r.id)).toEqual([ids[0]]);
    expect((await t.ctx.repos.content.listLicensed(org.id, { limit: 3, offset: 1 })).map((r) => r.id)).toEqual(
      ids.slice(1, 4),
    );
  });

  it('keeps the ledger append-only in the database itself: an entry cannot be updated or deleted, nor a deposit deleted or its amount changed (its status can)', async () => {
    const org = orgRow(t);
    await t.ctx.repos.organizations.insert(org);
    const entry = newId();
    await t.ctx.repos.ledger.insert({
      id: entry,
      organizationId: org.id,
      kind: 'credit',
      amountMicro: 5_000_000,
      balanceAfterMicro: 5_000_000,
      idempotencyKey: `append-only-${entry}`,
      reference: null,
      memo: null,
      createdAt: 1,
    });
    const deposit = `31337:0x${entry.replace(/-/g, '')}:0`;
    await t.ctx.repos.deposits.insertOnce({
      id: deposit,
      organizationId: org.id,
      chainId: 31337,
      txHash: `0x${entry}`,
      logIndex: 0,
      blockNumber: 7,
      blockHash: '0xb7',
      fromAddress: '0x1111111111111111111111111111111111111111',
      toAddress: '0x2222222222222222222222222222222222222222',
      amountMicro: 5_000_000,
      status: 'credited',
      createdAt: 1,
    });
    const sql = await rawConnection(t.ctx.config.db);
    try {
      const refused = /the ledger is append-only/;
      await expect(sql(`update ledger_entries set amount_micro = 999000000 where id = '${entry}'`)).rejects.toThrow(
        refused,
      );
      await expect(sql(`delete from ledger_entries where id = '${entry}'`)).rejects.toThrow(refused);
      await expect(sql(`update deposits set amount_micro = 1 where id = '${deposit}'`)).rejects.toThrow(refused);
      await expect(sql(`delete from deposits where id = '${deposit}'`)).rejects.toThrow(refused);
      if (dialect === 'postgres') await expect(sql('truncate ledger_entries')).rejects.toThrow(refused);
      // what a reorg does to a deposit is still allowed
      await sql(
        `update deposits set status = 'reversed', block_number = 8, block_hash = '0xb8' where id = '${deposit}'`,
      );
    } finally {
      await sql.close();
    }
    expect(await t.ctx.repos.ledger.sumOf(org.id)).toBe(5_000_000);
    expect((await t.ctx.repos.deposits.list(org.id, 5))[0]).toMatchObject({
      amountMicro: 5_000_000,
      status: 'reversed',
      blockNumber: 8,
    });
  });

  it('granting a license twice updates it and keeps its id', async () => {
    const org = orgRow(t);
    await t.ctx.repos.organizations.insert(org);
    const base = {
      organizationId: org.id,
      contentId: '*',
      contentType: 'music',
      licenseScope: 'all',
      watermarkingEnabled: false,
      pricePerStreamMicro: 1,
      isActive: true,
      createdAt: 1,
    };
    const first = await t.ctx.repos.licenses.upsert({ ...base, id: newId() });
    const second = await t.ctx.repos.licenses.upsert({
      ...base,
      id: newId(),
      pricePerStreamMicro: 5,
      watermarkingEnabled: true,
    });
    expect(second.id).toBe(first.id);
    expect(second).toMatchObject({ pricePerStreamMicro: 5, watermarkingEnabled: true });
    expect(await t.ctx.repos.licenses.countActive(org.id)).toBe(1);
  });
});
