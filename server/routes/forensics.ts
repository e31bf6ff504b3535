import { type Context as HonoContext, Hono } from 'hono';
import type { Context } from '../../src/context.js';
import { listCases, ownCase, uploadsDir } from '../../src/domain/forensics/cases.js';
import type { ForensicsQueue } from '../../src/domain/forensics/queue.js';
import { submitLeak } from '../../src/domain/forensics/submit.js';
import { paging } from '../../src/domain/validate.js';
import { badRequest } from '../../src/errors.js';
import { analysisBody, caseBody, caseDetailBody } from '../../src/present/forensics.js';
import { evidenceReport, REPORT_HEADERS, reportFileName } from '../../src/report/evidence-report.js';
import { publishedKey } from '../../src/report/signature.js';
import { reply, replyJsonText } from '../reply.js';
import type { AppEnv } from '../env.js';
import { requireKey } from '../middleware/api-key.js';
import { receiveUpload } from '../upload.js';

function asyncFlag(raw: string | undefined): boolean {
  if (raw === undefined || raw === 'false') return false;
  if (raw === 'true') return true;
  throw badRequest('async must be true or false');
}

/** The caller sees identities of its own organization's viewers only (src/present/forensics.ts). */
const ownOrganization = (c: HonoContext<AppEnv>) => ({ organizationId: c.get('auth').org.id });

/** Section 4.8 (scope forensics): analyse a leak, and the organization's cases; and the key reports are signed with. */
export function forensicsRoutes(ctx: Context, queue: ForensicsQueue) {
  const app = new Hono<AppEnv>();
  const shape = ctx.config.apiShape;

  // Open: whoever is handed a report (a court, the other side) must be able to fetch the key that
  // verifies it without an account. The answer is made once and asks nothing of the database, so
  // it costs what /health costs and needs no per-client limit; caches may keep it.
  const reportKey = JSON.stringify(publishedKey(ctx.keys.reports.publicKey));
  app.get('/report-key', (c) =>
    replyJsonText(c, reportKey, 200, { 'Cache-Control': 'public, max-age=3600', 'Access-Control-Allow-Origin': '*' }),
  );

  // The key guards the keyed routes only: on '*' it would also catch a wrong method on the open
  // report key above and answer "API key missing" where NOT_FOUND is the truth.
  const keyed = requireKey(ctx, 'forensics');

  // The leak streams to disk (never whole in memory); short ones are analysed within the request,
  // long ones with ?async=true answer 202 at once and are picked up by the queue.
  app.post('/analyze', keyed, async (c) => {
    const queued = asyncFlag(c.req.query('async'));
    const upload = await receiveUpload(c, {
      dir: uploadsDir(ctx),
      maxFileBytes: ctx.config.maxUploadBytes,
      fileField: 'file',
      fields: ['contentId', 'contentType'],
    });
    const { contentId, contentType } = upload.fields;
    const leak = {
      upload: { path: upload.path, name: upload.filename, bytes: upload.size },
      contentId: contentId ?? '',
      contentType: contentType ?? '',
    };
    const row = await submitLeak(ctx, queue, c.get('auth'), leak, { queued });
    return reply(c, analysisBody(row, shape, ownOrganization(c)), queued ? 202 : 200);
  });

  app.get('/cases', keyed, async (c) => {
    const page = paging(c.req.query('page'), c.req.query('limit'), 100);
    const { cases, total } = await listCases(ctx, c.get('auth'), page);
    return reply(c, {
      cases: cases.map((row) => caseBody(row, shape, ownOrganization(c))),
      total,
      page: page.page,
      limit: page.limit,
    });
  });

  app.get('/cases/:caseId', keyed, async (c) => {
    const row = await ownCase(ctx, c.get('auth'), c.req.param('caseId'));
    return reply(c, caseDetailBody(row, shape, ownOrganization(c)));
  });

  // The case as one HTML document to hand on (src/report/), downloaded rather than shown in place.
  app.get('/cases/:caseId/report', keyed, async (c) => {
    const row = await ownCase(ctx, c.get('auth'), c.req.param('caseId'));
    const page = await evidenceReport(ctx, row, ownOrganization(c));
    return c.body(page, 200, {
      ...REPORT_HEADERS,
      'content-disposition': `attachment; filename="${reportFileName(row)}"`,
    });
  });

  return app;
}
