import { and, count, eq, isNull, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';
import { batchPerTurn } from '../per-turn.js';
import type { OrganizationRow } from './organizations.js';
import type * as tables from '../schema/tables.js';

export type ApiKeyRow = typeof tables.apiKeys.$inferSelect;

export function apiKeysRepo(x: Executor) {
  const t = x.s.apiKeys;
  const o = x.s.organizations;
  const byHash = x.prepared('drm_api_key_by_hash', (q) =>
    q
      .select({ key: t, org: o })
      .from(t)
      .innerJoin(o, eq(o.id, t.organizationId))
      // key_hash is unique, so no LIMIT: a bound LIMIT ? makes SQLite run this lookup ~8x slower.
      .where(eq(t.keyHash, sql.placeholder('keyHash'))),
  );
  // Concurrent requests with one key (the usual load of a busy organization) share one lookup.
  const findShared = batchPerTurn(
    (keyHash: string) => keyHash,
    async (keyHash) => {
      const found = (await byHash({ keyHash }))[0];
      return () => found;
    },
  );
  return {
    insert: (row: ApiKeyRow) => x.run((q) => q.insert(t).values(row)),

    /** The key behind a bearer token with its organization, in one query (the hot path of every request). */
    findByHash(keyHash: string): Promise<{ key: ApiKeyRow; org: OrganizationRow } | undefined> {
      return findShared(keyHash);
    },

    async find(id: string): Promise<ApiKeyRow | undefined> {
      const rows = await x.run((q) => q.select().from(t).where(eq(t.id, id)).limit(1));
      return rows[0];
    },

    /** Revokes a key unless it is already revoked; false means somebody else revoked it first. */
    async revoke(id: string, at: number): Promise<boolean> {
      const rows = await x.run((q) =>
        q
          .update(t)
          .set({ revokedAt: at })
          .where(and(eq(t.id, id), isNull(t.revokedAt)))
          .returning({ id: t.id }),
      );
      return rows.length > 0;
    },

    async setRateLimit(id: string, perHour: number | null): Promise<void> {
      await x.run((q) => q.update(t).set({ rateLimitPerHour: perHour }).where(eq(t.id, id)));
    },

    async countActive(organizationId: string): Promise<number> {
      const rows = await x.run((q) =>
        q
          .select({ n: count() })
          .from(t)
          .where(and(eq(t.organizationId, organizationId), isNull(t.revokedAt))),
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
