import { and, asc, count, eq, gt, isNull, lte, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';

/** A lock key of nonce issuance (any constant unique among the service's advisory locks). */
const NONCE_LOCK = 724003;

export function adminsRepo(x: Executor) {
  const w = x.s.adminWallets;
  const n = x.s.adminNonces;
  return {
    /** Granting twice is not an error: the first grant time stays. */
    grant: (address: string, at: number) =>
      x.run((q) => q.insert(w).values({ address, grantedAt: at }).onConflictDoNothing()),

    async revoke(address: string): Promise<boolean> {
      const rows = await x.run((q) => q.delete(w).where(eq(w.address, address)).returning({ a: w.address }));
      return rows.length > 0;
    },

    async isGranted(address: string): Promise<boolean> {
      const rows = await x.run((q) => q.select({ a: w.address }).from(w).where(eq(w.address, address)).limit(1));
      return rows.length > 0;
    },

    list: () => x.run((q) => q.select().from(w).orderBy(asc(w.grantedAt)).limit(1000)),

    addNonce: (nonce: string, expiresAt: number) => x.run((q) => q.insert(n).values({ nonce, expiresAt })),

    /**
     * Serializes nonce issuance inside a transaction, so that the bound on outstanding nonces is
     * counted and kept in one step. SQLite transactions already run one at a time; on Postgres an
     * advisory lock held to the commit.
     */
    async lockNonces(): Promise<void> {
      if (x.dialect === 'postgres') await x.run((q) => q.execute(sql`select pg_advisory_xact_lock(${NONCE_LOCK})`));
    },

    /** Nonces handed out that are neither used nor expired (the open endpoint keeps them bounded). */
    async countOutstandingNonces(now: number): Promise<number> {
      const rows = await x.run((q) =>
        q
          .select({ c: count() })
          .from(n)
          .where(and(isNull(n.usedAt), gt(n.expiresAt, now))),
      );
      return Number(rows[0]?.c ?? 0);
    },

    /** The nonce endpoint is open, so expired nonces are deleted by the server's housekeeping. */
    pruneNonces: (now: number) => x.run((q) => q.delete(n).where(lte(n.expiresAt, now))),

    /** Marks a nonce used if it exists, is unused and unexpired; true only for the one caller that wins. */
    async consumeNonce(nonce: string, now: number): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(n)
          .set({ usedAt: now })
          .where(and(eq(n.nonce, nonce), isNull(n.usedAt), gt(n.expiresAt, now)))
          .returning({ nonce: n.nonce }),
      );
      return rows.length > 0;
    },
  };
}
