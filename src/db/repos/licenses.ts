import { and, count, desc, eq, inArray, or, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';

export interface LicenseRow {
  id: string;
  organizationId: string;
  /** a content UUID, or '*' for all content of contentType */
  contentId: string;
  contentType: string;
  licenseScope: string;
  watermarkingEnabled: boolean;
  pricePerStreamMicro: number;
  isActive: boolean;
  createdAt: number;
}

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
      const rows = await x.run((q) =>
        q
          .select()
          .from(t)
          .where(and(inArray(t.organizationId, organizationIds), eq(t.isActive, true)))
          .orderBy(desc(t.createdAt), desc(t.id)),
      );
      const kept = new Map<string, number>();
      return rows.filter((r) => {
        const n = kept.get(r.organizationId) ?? 0;
        kept.set(r.organizationId, n + 1);
        return n < perOrganization;
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
