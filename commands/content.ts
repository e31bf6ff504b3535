import { iso } from '../src/clock.js';
import { contentOverview, deleteContent } from '../src/domain/content-admin.js';
import { anyCase, listCases } from '../src/domain/forensics/cases.js';
import { paging } from '../src/domain/validate.js';
import { contentAdminBody } from '../src/present/content.js';
import { caseBody, caseDetailBody } from '../src/present/forensics.js';
import { evidenceReport } from '../src/report/evidence-report.js';
import type { DbOptions } from './options.js';
import { printJson, printTable } from './output.js';
import { checkReportPath, writeReportFile } from './report-file.js';
import { withContext } from './with-context.js';

// `drm content …` and `drm cases …`: the operator's catalog and every forensic case, local ones included.

type Paged = DbOptions & { page?: string; limit?: string };
const when = (ms: number) => iso(ms).slice(0, 19).replace('T', ' ');

export const contentList = (opts: Paged) =>
  withContext(opts, async (ctx, out) => {
    const page = paging(opts.page, opts.limit, 200);
    const { rows, total } = await ctx.repos.contentAdmin.listAll(page.limit, page.offset);
    if (out.json)
      printJson(out, { content: rows.map((r) => contentAdminBody(r)), total, page: page.page, limit: page.limit });
    else {
      printTable(
        out,
        ['id', 'title', 'type', 'seconds', 'resolution', 'marked', 'segments', 'status', 'created (UTC)'],
        rows.map((r) => {
          const b = contentAdminBody(r);
          return [
            b.id,
            b.title,
            b.type,
            b.duration,
            b.resolution,
            b.isWatermarked ? 'A/B' : 'no',
            `${b.segmentCount} × ${b.segmentSeconds} s`,
            b.status,
            when(r.createdAt),
          ];
        }),
      );
      out.write(`${rows.length} of ${total} item(s)`);
    }
    return 0;
  });

export const contentShow = (id: string, opts: DbOptions) =>
  withContext(opts, async (ctx, out) => {
    const { content, ...refs } = await contentOverview(ctx, id);
    const body = contentAdminBody(content, refs);
    if (out.json) printJson(out, body);
    else {
      printTable(
        out,
        ['field', 'value'],
        Object.entries({ ...body, references: undefined })
          .filter(([, v]) => v !== undefined)
          .map(([k, v]) => [k, v as string]),
      );
      out.write(
        `sessions ${refs.sessions} (${refs.liveSessions} playing now), ` +
          `licenses ${refs.licenses}, forensic cases ${refs.cases}`,
      );
    }
    return 0;
  });

export const contentDelete = (id: string, opts: DbOptions & { force?: boolean }) =>
  withContext(opts, async (ctx, out) => {
    const d = await deleteContent(ctx, id, { force: opts.force });
    if (out.json) printJson(out, { success: true, ...d });
    else if (d.outcome === 'removed') out.write(`deleted ${d.id}: files and catalog row removed`);
    else
      out.write(
        `deleted ${d.id}: files removed; the row stays as a tombstone for the sessions ` +
          `and cases that name it${d.endedSessions ? `; ${d.endedSessions} session(s) ended` : ''}`,
      );
    return 0;
  });

export const casesList = (opts: Paged) =>
  withContext(opts, async (ctx, out) => {
    const page = paging(opts.page, opts.limit, 100);
    const { cases, total } = await listCases(ctx, null, page);
    const bodies = cases.map((c) => ({
      ...caseBody(c, ctx.config.apiShape, 'operator'),
      organizationId: c.organizationId,
    }));
    if (out.json) printJson(out, { cases: bodies, total });
    else {
      // The matched viewer by the name its organization gave it (drm cases show has the platform's id too).
      printTable(
        out,
        ['case', 'created (UTC)', 'status', 'classification', 'content', 'matched viewer', 'asked by'],
        cases.map((c, i) => [
          c.id,
          when(c.createdAt),
          c.status,
          c.classification,
          c.contentId,
          bodies[i]?.matchedExternalViewerId ?? c.matchedViewerId,
          c.organizationId ?? 'local (drm analyze)',
        ]),
      );
      out.write(`${cases.length} of ${total} case(s)`);
    }
    return 0;
  });

export const casesShow = (id: string, opts: DbOptions & { report?: string }) =>
  withContext(opts, async (ctx, out) => {
    const row = await anyCase(ctx, id);
    if (opts.report) {
      checkReportPath(opts.report);
      writeReportFile(out, opts.report, await evidenceReport(ctx, row, 'operator'));
      return 0;
    }
    printJson(out, { ...caseDetailBody(row, ctx.config.apiShape, 'operator'), organizationId: row.organizationId });
    return 0;
  });
