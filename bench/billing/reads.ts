import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { ManualClock } from '../../src/clock.js';
import { resolveConfig } from '../../src/config.js';
import type { SessionRow } from '../../src/db/repos/index.js';
import { usageSoFar } from '../../src/domain/billing/account.js';
import { closePeriod } from '../../src/domain/billing/invoicing.js';
import { upcomingInvoice } from '../../src/domain/billing/upcoming.js';
import { registerOrganization } from '../../src/domain/organizations.js';
import { createLogger } from '../../src/log.js';
import { median } from '../stats.js';
import { benchSession } from './session-row.js';
import type { Context } from '../../src/context.js';
import { createContext } from '../../src/create-context.js';

export interface ReadCost {
  sessions: number;
  /** seconds to write the month's sessions (the counters' trigger runs per row) */
  seedS: number;
  upcomingMs: number;
  usageMs: number;
  /** the month read as drm read it before the counters: one scan of the organization's sessions */
  scanMs: number;
  closeMs: number;
}

/**
 * What GET /billing/invoices/upcoming (upcomingInvoice), GET /billing/usage (usageSoFar) and the
 * month's close cost for one organization as its sessions this month grow, beside the month read
 * as before the counters (one indexed scan of its sessions, on a connection of its own): sessions
 * are written straight into the database in multi-row INSERTs (a tenth at a license's own price),
 * each read is the median of `runs` (at least 5), and the close the median of 3 (after each, its
 * invoice and usage record are deleted by hand so that it closes again).
 */
export async function billingReads(
  db: string | undefined,
  dir: string,
  counts: number[],
  runs = 7,
): Promise<ReadCost[]> {
  fs.mkdirSync(dir, { recursive: true });
  const clock = new ManualClock(Date.UTC(2026, 0, 20));
  const config = resolveConfig({ dataDir: dir, logLevel: 'silent', ...(db && { db }) }, {});
  const ctx = await createContext(config, { log: createLogger('silent'), clock });
  const raw = await rawConnection(config.db);
  const out: ReadCost[] = [];
  try {
    for (const [i, count] of counts.entries()) {
      clock.set(Date.UTC(2026, i, 20));
      const org = (await registerOrganization(ctx, { name: `reads ${count}` }, 'paid')).organization;
      const viewerId = await aViewer(ctx, org.id);
      const seeded = performance.now();
      await sessionsOf(ctx, org.id, viewerId, count, clock.now());
      const seedS = (performance.now() - seeded) / 1000;
      const period = { start: Date.UTC(2026, i, 1), end: Date.UTC(2026, i + 1, 1) };
      const upcomingMs = await medianMs(Math.max(5, runs), () => upcomingInvoice(ctx, org.id));
      const usageMs = await medianMs(Math.max(5, runs), () => usageSoFar(ctx, org));
      const scanMs = await medianMs(Math.max(5, runs), () => raw.scan(org.id, period.start, period.end));
      clock.set(period.end + 6 * 3_600_000);
      const closeMs = await medianMs(
        3,
        async () => {
          await closePeriod(ctx, org.id, period);
        },
        () => raw.unclose(org.id, period.start),
      );
      out.push({ sessions: count, seedS, upcomingMs, usageMs, scanMs, closeMs });
    }
  } finally {
    await raw.close();
    await ctx.db.close();
  }
  return out;
}

async function medianMs(runs: number, fn: () => Promise<unknown>, after?: () => Promise<void>): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < runs; r++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
    await after?.();
  }
  return median(times);
}

/** The month read as before the counters, and undoing a close; on a connection of its own (bench only). */
async function rawConnection(url: string) {
  const scanSql = (p: (n: number) => string) =>
    `select price_per_stream_micro, count(*), sum(bytes_served), max(expires_at) from stream_sessions where organization_id = ${p(1)} and created_at >= ${p(2)} and created_at < ${p(3)} group by price_per_stream_micro`;
  const undo = [
    'delete from invoice_lines where invoice_id in (select id from invoices where organization_id = $1 and period_start = $2)',
    'delete from invoices where organization_id = $1 and period_start = $2',
    'delete from period_usage where organization_id = $1 and period_start = $2',
  ];
  if (url.startsWith('sqlite:')) {
    const db = new Sqlite(path.resolve(url.slice('sqlite:'.length)));
    db.pragma('busy_timeout = 5000');
    const scan = db.prepare(scanSql(() => '?'));
    const deletes = undo.map((s) => db.prepare(s.replaceAll(/\$\d/g, '?')));
    return {
      scan: async (org: string, start: number, end: number) => scan.all(org, start, end),
      unclose: async (org: string, start: number) =>
        void db.transaction(() => {
          for (const d of deletes) d.run(org, start);
        })(),
      close: async () => db.close(),
    };
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return {
    scan: (org: string, start: number, end: number) =>
      client.query(
        scanSql((n) => `$${n}`),
        [org, start, end],
      ),
    unclose: async (org: string, start: number) => {
      for (const s of undo) await client.query(s, [org, start]);
    },
    close: () => client.end(),
  };
}

async function aViewer(ctx: Context, organizationId: string): Promise<string> {
  const id = randomUUID();
  const binaryId = Array.from({ length: 40 }, () => (Math.random() < 0.5 ? '0' : '1')).join('');
  await ctx.repos.viewers.insertUnlessTaken({
    ...{
      id,
      organizationId,
      externalViewerId: `bench-${id}`,
      binaryId,
      walletAddress: `0x${'1'.repeat(40)}`,
      walletIndex: null,
      hasOwnWallet: false,
    },
    ...{
      email: null,
      totalStreams: 0,
      isBlocked: false,
      blockedReason: null,
      firstSeen: ctx.clock.now(),
      lastSeen: ctx.clock.now(),
    },
  });
  return id;
}

/** The month's sessions, 1,000 to a statement and 10 statements to a transaction. */
async function sessionsOf(
  ctx: Context,
  organizationId: string,
  viewerId: string,
  count: number,
  now: number,
): Promise<void> {
  const row = (j: number): SessionRow =>
    benchSession(organizationId, viewerId, {
      bytesServed: 50_000_000,
      expiresAt: now + 3_600_000,
      createdAt: now - (j % 1_000_000),
      pricePerStreamMicro: j % 10 === 0 ? 20_000 : null,
    });
  for (let i = 0; i < count; i += 10_000) {
    await ctx.db.transaction(async (tx) => {
      for (let b = i; b < Math.min(count, i + 10_000); b += 1_000) {
        await tx.repos.sessions.insertMany(Array.from({ length: Math.min(1_000, count - b) }, (_, k) => row(b + k)));
      }
    });
  }
}
