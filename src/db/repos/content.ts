import { and, eq, or, sql } from 'drizzle-orm';
import type { Executor } from '../executor.js';

export interface ContentRow {
  id: string;
  title: string;
  description: string | null;
  type: string;
  /** milliseconds */
  duration: number;
  resolution: string | null;
  isWatermarked: boolean;
  segmentCount: number;
  storagePath: string | null;
  status: string;
  createdAt: number;
}

export function contentRepo(x: Executor) {
  const t = x.s.content;
  const l = x.s.licenses;
  // By primary key, so no LIMIT (a bound LIMIT ? is slow on SQLite).
  const byId = x.prepared('drm_content_by_id', (q) => q.select().from(t).where(eq(t.id, sql.placeholder('id'))));
  const licensedPage = x.prepared('drm_content_licensed', (q) =>
    q
      .selectDistinct({ c: t })
      .from(t)
      .innerJoin(
        l,
        and(
          eq(l.organizationId, sql.placeholder('organizationId')),
          eq(l.isActive, true),
          eq(l.contentType, t.type),
          or(eq(l.contentId, t.id), eq(l.contentId, '*')),
        ),
      )
      .where(eq(t.status, 'ready'))
      .orderBy(t.createdAt, t.id)
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset')),
  );
  return {
    insert: (row: ContentRow) => x.run((q) => q.insert(t).values(row)),

    async find(id: string): Promise<ContentRow | undefined> {
      return (await byId({ id }))[0];
    },

    /** Ready content covered by an active license of the organization: its own id or the type's wildcard. */
    async listLicensed(organizationId: string, opts: { limit: number; offset: number }): Promise<ContentRow[]> {
      const rows = await licensedPage({ organizationId, ...opts });
      return rows.map((r) => r.c);
    },
  };
}
