import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { ManualClock } from '../../src/clock.js';
import { resolveConfig } from '../../src/config.js';
import { createContext } from '../../src/context.js';
import { usageSoFar } from '../../src/domain/billing/account.js';
import { closePeriod } from '../../src/domain/billing/invoicing.js';
import { registerOrganization } from '../../src/domain/organizations.js';
import { createLogger } from '../../src/log.js';
import { median } from '../stats.js';

export interface ReadCost {
  sessions: number;
  usageMs: number;
  closeMs: number;
}

/**
 * What GET /billing/usage (usageSoFar, as the route calls it) and the month's close cost for one
 * organization as its sessions this month grow: sessions are written straight into the database
 * (a tenth at a license's own price), then the usage is read five times and the month closed.
 */
export async function billingReads(db: string | undefined, dir: string, counts: number[]): Promise<ReadCost[]> {
  fs.mkdirSync(dir, { recursive: true });
  const clock = new ManualClock(Date.UTC(2026, 0, 20));
  const ctx = await createContext(resolveConfig({ dataDir: dir, logLevel: 'silent', ...(db && { db }) }, {}), { log: createLogger('silent'), clock });
  const out: ReadCost[] = [];
  try {
    for (const [i, count] of counts.entries()) {
      clock.set(Date.UTC(2026, i, 20));
      const org = (await registerOrganization(ctx, { name: `reads ${count}` }, 'paid')).organization;
      const viewerId = await aViewer(ctx, org.id);
      await sessionsOf(ctx, org.id, viewerId, count, clock.now());
      const times: number[] = [];
      for (let r = 0; r < 5; r++) {
        const t = performance.now();
        await usageSoFar(ctx, org);
        times.push(performance.now() - t);
      }
      const d = new Date(clock.now());
      const period = { start: Date.UTC(2026, i, 1), end: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
      clock.set(period.end + 6 * 3_600_000);
      const t = performance.now();
      await closePeriod(ctx, org.id, period);
      out.push({ sessions: count, usageMs: median(times), closeMs: performance.now() - t });
    }
  } finally {
    await ctx.db.close();
  }
  return out;
}

async function aViewer(ctx: Awaited<ReturnType<typeof createContext>>, organizationId: string): Promise<string> {
  const id = randomUUID();
  const binaryId = Array.from({ length: 40 }, () => (Math.random() < 0.5 ? '0' : '1')).join('');
  await ctx.repos.viewers.insertUnlessTaken({
    ...{ id, organizationId, externalViewerId: `bench-${id}`, binaryId, walletAddress: `0x${'1'.repeat(40)}`, walletIndex: null, hasOwnWallet: false },
    ...{ email: null, totalStreams: 0, isBlocked: false, blockedReason: null, firstSeen: ctx.clock.now(), lastSeen: ctx.clock.now() },
  });
  return id;
}

async function sessionsOf(ctx: Awaited<ReturnType<typeof createContext>>, organizationId: string, viewerId: string, count: number, now: number): Promise<void> {
  for (let i = 0; i < count; i += 2_000) {
    await ctx.db.transaction(async (tx) => {
      for (let j = i; j < Math.min(count, i + 2_000); j++) {
        await tx.repos.sessions.insert({
          ...{ id: randomUUID(), organizationId, apiKeyId: 'bench', contentId: 'bench', viewerId, ipAddress: null, userAgent: null, isActive: true },
          ...{ bytesServed: 50_000_000, expiresAt: now + 3_600_000, createdAt: now - (j % 1_000_000), watermarked: true, pricePerStreamMicro: j % 10 === 0 ? 20_000 : null, viewerBits: null },
        });
      }
    });
  }
}
