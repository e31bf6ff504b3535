import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { resolveConfig } from '../../src/config.js';
import type { Context } from '../../src/context.js';
import { createContext } from '../../src/create-context.js';
import counting from '../../src/db/migrations/steps/0021-usage-counters-per-period-kept-by.js';
import { registerOrganization } from '../../src/domain/organizations.js';
import { createLogger } from '../../src/log.js';
import { median } from '../stats.js';
import { benchSession } from './session-row.js';

export interface WriteCost {
  /** µs per new session (the product's prepared insert, 8 in flight), with the counters' triggers and without */
  insertUs: number;
  insertBareUs: number;
  /** µs per segment's byte count (sessions.addBytes, 8 in flight on one organization) */
  addBytesUs: number;
  addBytesBareUs: number;
}

const OPS = 20_000;

/**
 * What the usage counters cost where they are written: sessions inserted and bytes counted for one
 * organization, 8 at a time, with the triggers of migration 21 and with them dropped (by hand, on
 * a connection of its own, then made again), alternated, `runs` of each; medians.
 */
export async function writeCost(db: string | undefined, dir: string, runs = 3): Promise<WriteCost> {
  fs.mkdirSync(dir, { recursive: true });
  const config = resolveConfig({ dataDir: dir, logLevel: 'silent', ...(db && { db }) }, {});
  const ctx = await createContext(config, { log: createLogger('silent') });
  const triggers = await triggerSwitch(config.db);
  const times = {
    insertUs: [] as number[],
    insertBareUs: [] as number[],
    addBytesUs: [] as number[],
    addBytesBareUs: [] as number[],
  };
  try {
    for (let r = 0; r < 2 * runs; r++) {
      const bare = r % 2 === 1;
      if (bare) await triggers.drop();
      const t = await oneRun(ctx);
      if (bare) await triggers.create();
      (bare ? times.insertBareUs : times.insertUs).push(t.insertUs);
      (bare ? times.addBytesBareUs : times.addBytesUs).push(t.addBytesUs);
    }
  } finally {
    await triggers.close();
    await ctx.db.close();
  }
  return {
    insertUs: median(times.insertUs),
    insertBareUs: median(times.insertBareUs),
    addBytesUs: median(times.addBytesUs),
    addBytesBareUs: median(times.addBytesBareUs),
  };
}

async function oneRun(ctx: Context) {
  const org = (await registerOrganization(ctx, { name: `writes ${randomUUID()}` }, 'paid')).organization.id;
  const viewerId = randomUUID();
  const binaryId = Array.from({ length: 40 }, () => (Math.random() < 0.5 ? '0' : '1')).join('');
  await ctx.repos.viewers.insertUnlessTaken({
    ...{
      id: viewerId,
      organizationId: org,
      externalViewerId: `bench-${viewerId}`,
      binaryId,
      walletAddress: `0x${'1'.repeat(40)}`,
      walletIndex: null,
      hasOwnWallet: false,
    },
    ...{ email: null, totalStreams: 0, isBlocked: false, blockedReason: null, firstSeen: 0, lastSeen: 0 },
  });
  const now = Date.now();
  const ids: string[] = [];
  const eightAtATime = async (op: (i: number) => Promise<void>) => {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < OPS) await op(next++);
      }),
    );
    return ((performance.now() - started) / OPS) * 1000;
  };
  const insertUs = await eightAtATime(async () => {
    const id = randomUUID();
    ids.push(id);
    await ctx.repos.sessions.insert(
      benchSession(org, viewerId, {
        id,
        bytesServed: 0,
        expiresAt: now + 3_600_000,
        createdAt: now,
        pricePerStreamMicro: null,
      }),
    );
  });
  const addBytesUs = await eightAtATime((i) => ctx.repos.sessions.addBytes(ids[i % ids.length] as string, 1_000_000));
  return { insertUs, addBytesUs };
}

/** Drops and makes again the counters' triggers, as migration 21 wrote them. */
async function triggerSwitch(url: string) {
  if (url.startsWith('sqlite:')) {
    const create = counting.sqlite.slice(
      counting.sqlite.indexOf('CREATE TRIGGER'),
      counting.sqlite.lastIndexOf('INSERT INTO `usage_counters`'),
    );
    const db = new Sqlite(path.resolve(url.slice('sqlite:'.length)));
    db.pragma('busy_timeout = 5000');
    const names = ['insert', 'update', 'delete'].map((n) => `stream_sessions_usage_${n}`);
    return {
      drop: async () => void db.exec(names.map((n) => `DROP TRIGGER ${n};`).join('\n')),
      create: async () => void db.exec(create),
      close: async () => db.close(),
    };
  }
  const create = /CREATE TRIGGER stream_sessions_usage [^;]*;/.exec(counting.postgres)?.[0] as string;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    drop: async () => void (await client.query('DROP TRIGGER stream_sessions_usage ON stream_sessions')),
    create: async () => void (await client.query(create)),
    close: () => client.end(),
  };
}
