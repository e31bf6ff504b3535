import { count, eq, isNotNull, sql } from 'drizzle-orm';
import { type Executor, literalInt } from '../executor.js';
import type * as tables from '../schema/tables.js';

export type OrganizationRow = typeof tables.organizations.$inferSelect;

export type OrganizationPatch = Partial<Omit<OrganizationRow, 'id' | 'createdAt'>>;

export function organizationsRepo(x: Executor) {
  const t = x.s.organizations;
  return {
    insert: (row: OrganizationRow) => x.run((q) => q.insert(t).values(row)),

    async find(id: string): Promise<OrganizationRow | undefined> {
      const rows = await x.run((q) => q.select().from(t).where(eq(t.id, id)).limit(1));
      return rows[0];
    },

    async update(id: string, patch: OrganizationPatch): Promise<boolean> {
      const rows = await x.run((q) => q.update(t).set(patch).where(eq(t.id, id)).returning({ id: t.id }));
      return rows.length > 0;
    },

    /** Wallet indexes for generated addresses are handed out in order, never reused. */
    async nextWalletIndex(): Promise<number> {
      const rows = await x.run((q) => q.select({ max: sql<number | null>`max(${t.walletIndex})` }).from(t));
      return Number(rows[0]?.max ?? -1) + 1;
    },

    /** A page of organizations (id and creation), oldest first: for work done per organization. */
    page: (limit: number, offset: number): Promise<{ id: string; createdAt: number }[]> =>
      x.run((q) =>
        q
          .select({ id: t.id, createdAt: t.createdAt })
          .from(t)
          .orderBy(t.createdAt, t.id)
          .limit(literalInt(limit))
          .offset(literalInt(offset)),
      ),

    /** Organizations whose balance is below zero, longest first (the operator's list to chase). */
    negative: (limit: number): Promise<OrganizationRow[]> =>
      x.run((q) =>
        q.select().from(t).where(isNotNull(t.negativeSince)).orderBy(t.negativeSince, t.id).limit(literalInt(limit)),
      ),

    async count(): Promise<number> {
      const rows = await x.run((q) => q.select({ n: count() }).from(t));
      return Number(rows[0]?.n ?? 0);
    },

    /** The admin overview: one page of organizations with their counters, oldest first. */
    async listWithStats(opts: { monthStart: number; limit: number; offset: number }) {
      // Correlated subqueries in plain SQL with aliases: drizzle leaves columns unqualified inside
      // sql``, which would compare a table with itself. `and l.is_active` reads the same in both dialects.
      const keys = sql<number>`(select count(*) from api_keys k
        where k.organization_id = organizations.id and k.revoked_at is null)`;
      const lic = sql<number>`(select count(*) from licenses l
        where l.organization_id = organizations.id and l.is_active)`;
      const streams = sql<number>`(select count(*) from stream_sessions s
        where s.organization_id = organizations.id and s.created_at >= ${opts.monthStart})`;
      const rows = await x.run((q) =>
        q
          .select({ org: t, totalApiKeys: keys, activeLicenses: lic, streamsThisMonth: streams })
          .from(t)
          .orderBy(t.createdAt, t.id)
          .limit(opts.limit)
          .offset(opts.offset),
      );
      return rows.map((r) => ({
        ...r.org,
        totalApiKeys: Number(r.totalApiKeys),
        activeLicenses: Number(r.activeLicenses),
        streamsThisMonth: Number(r.streamsThisMonth),
      }));
    },
  };
}
