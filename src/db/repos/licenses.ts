import { and, count, desc, eq, getTableColumns, inArray, lte, or, sql } from 'drizzle-orm';
import { type Executor, literalInt } from '../executor.js';
import type * as tables from '../schema/tables.js';

export type LicenseRow = typeof tables.licenses.$inferSelect;

export function licensesRepo(x: Executor) {
  const t = x.s.licenses;
  const covering = x.prepared('drm_licenses_covering', (q) =>
    q
      .select()
      .from(t)
      .where(
        and(
          eq(t.organizationId, sql.placeholder('organizationId')),
          eq(t.contentType, sql.placeholder('contentType')),
          eq(t.isActive, true),
          or(eq(t.contentId, sql.placeholder('contentId')), eq(t.contentId, '*')),
        ),
      ),
  );
  return {
    /** One license per (organization, content, type): granting again updates it and keeps its id. */
    async upsert(row: LicenseRow): Promise<LicenseRow> {
      const rows = await x.run((q) =>
        q
          .insert(t)
          .values(row)
          .onConflictDoUpdate({
            target: [t.organizationId, t.contentId, t.contentType],
            set: {
              licenseScope: row.licenseScope,
              watermarkingEnabled: row.watermarkingEnabled,
              pricePerStreamMicro: row.pricePerStreamMicro,
              isActive: true,
            },
          })
          .returning(),
      );
      return rows[0] as LicenseRow;
    },

    /** The license that lets an organization use one content item: the specific one wins over the wildcard. */
    async findFor(organizationId: string, contentId: string, contentType: string): Promise<LicenseRow | undefined> {
      const rows = await covering({ organizationId, contentId, contentType });
      return rows.find((r) => r.contentId === contentId) ?? rows[0];
    },

    /** The active licenses of a page of organizations, at most `perOrganization` each (newest first). */
    async activeFor(organizationIds: string[], perOrganization: number): Promise<LicenseRow[]> {
      if (organizationIds.length === 0) return [];
      // Cut per organization in the database: one organization may hold thousands of licenses.
      const newestFirst = sql<number>`row_number() over
        (partition by ${t.organizationId} order by ${t.createdAt} desc, ${t.id} desc)`;
      return x.run((q) => {
        const ranked = q
          .select({ ...getTableColumns(t), rank: newestFirst.as('rank') })
          .from(t)
          .where(and(inArray(t.organizationId, organizationIds), eq(t.isActive, true)))
          .as('ranked');
        const { rank, ...columns } = ranked._.selectedFields;
        return q
          .select(columns)
          .from(ranked)
          .where(lte(rank, literalInt(perOrganization)))
          .orderBy(desc(ranked.createdAt), desc(ranked.id)) as unknown as PromiseLike<LicenseRow[]>;
      });
    },

    async countActive(organizationId: string): Promise<number> {
      const rows = await x.run((q) =>
        q
          .select({ n: count() })
          .from(t)
          .where(and(eq(t.organizationId, organizationId), eq(t.isActive, true))),
      );
      return Number(rows[0]?.n ?? 0);
    },
  };
}
