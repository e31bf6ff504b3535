import { and, eq, or } from 'drizzle-orm';
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
  return {
    insert: (row: ContentRow) => x.run((q) => q.insert(t).values(row)),

    async find(id: string): Promise<ContentRow | undefined> {
      const rows = await x.run((q) => q.select().from(t).where(eq(t.id, id)).limit(1));
      return rows[0];
    },

    /** Ready content covered by an active license of the organization: its own id or the type's wildcard. */
    async listLicensed(organizationId: string, opts: { limit: number; offset: number }): Promise<ContentRow[]> {
      const rows = await x.run((q) =>
        q
          .selectDistinct({ c: t })
          .from(t)
          .innerJoin(
            l,
            and(
              eq(l.organizationId, organizationId),
              eq(l.isActive, true),
              eq(l.contentType, t.type),
              or(eq(l.contentId, t.id), eq(l.contentId, '*')),
            ),
          )
          .where(eq(t.status, 'ready'))
          .orderBy(t.createdAt, t.id)
          .limit(opts.limit)
          .offset(opts.offset),
      );
      return rows.map((r) => r.c);
    },
  };
}
