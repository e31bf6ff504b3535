import { and, eq, isNull, lt } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import type * as billing from '../schema/billing.js';

export type IdempotentRequestRow = typeof billing.idempotentRequests.$inferSelect;

/** Money requests by (organization, Idempotency-Key): claimed, then answered or let go. */
export function idempotencyRepo(x: Executor) {
  const t = x.s.idempotentRequests;
  const row = (organizationId: string, key: string) => and(eq(t.organizationId, organizationId), eq(t.key, key));
  return {
    /** Claims the key for a request not yet answered; false when a row holds it (answered, or in flight). */
    async claim(organizationId: string, key: string, requestHash: string, now: number): Promise<boolean> {
      const values = { organizationId, key, requestHash, statusCode: null, responseBody: null, createdAt: now };
      const rows = await x.run((q) => q.insert(t).values(values).onConflictDoNothing().returning({ key: t.key }));
      return rows.length === 1;
    },

    async find(organizationId: string, key: string): Promise<IdempotentRequestRow | undefined> {
      return (await x.run((q) => q.select().from(t).where(row(organizationId, key)).limit(1)))[0];
    },

    /** Takes over a row older than `before` for a new request (its key's time is up): false when another did. */
    async reclaim(
      organizationId: string,
      key: string,
      requestHash: string,
      now: number,
      before: number,
    ): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ requestHash, statusCode: null, responseBody: null, createdAt: now })
          .where(and(row(organizationId, key), lt(t.createdAt, before)))
          .returning({ key: t.key }),
      );
      return rows.length === 1;
    },

    answer: (organizationId: string, key: string, statusCode: number, responseBody: string) =>
      x.run((q) => q.update(t).set({ statusCode, responseBody }).where(row(organizationId, key))),

    /** Lets go of a claim whose request was not answered with success, so a retry runs it again. */
    release: (organizationId: string, key: string) =>
      x.run((q) => q.delete(t).where(and(row(organizationId, key), isNull(t.statusCode)))),

    /**
     * Forgets keys older than `before` (the hourly housekeeping); one still unanswered by then belonged to a process
     * that died.
     */
    async prune(before: number): Promise<void> {
      await x.run((q) => q.delete(t).where(lt(t.createdAt, before)));
    },
  };
}
