import { Hono } from 'hono';
import type { Context } from '../../src/context.js';
import { anyCase, listCases } from '../../src/domain/forensics/cases.js';
import { paging } from '../../src/domain/validate.js';
import { caseBody, caseDetailBody } from '../../src/present/forensics.js';
import { reply } from '../reply.js';
import type { AppEnv } from '../env.js';
import { requireAdmin } from '../middleware/admin.js';

/**
 * The platform operator's view of forensic cases (SIWE admin token): every organization's cases
 * with the whole evidence chain, including matches among other organizations' viewers that the
 * asking organization sees only as `matchedOutsideOrganization`.
 */
export function adminForensicsRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();
  const shape = ctx.config.apiShape;
  app.use('*', requireAdmin(ctx));

  app.get('/cases', async (c) => {
    const page = paging(c.req.query('page'), c.req.query('limit'), 100);
    const { cases, total } = await listCases(ctx, null, page);
    const body = cases.map((row) => ({ ...caseBody(row, shape, 'operator'), organizationId: row.organizationId }));
    return reply(c, { cases: body, total, page: page.page, limit: page.limit });
  });

  app.get('/cases/:caseId', async (c) => {
    const row = await anyCase(ctx, c.req.param('caseId'));
    const detail = caseDetailBody(row, shape, 'operator');
    // Who asked: the organization that opened the case (null for a local `drm analyze`).
    return reply(c, { ...detail, organizationId: row.organizationId });
  });

  return app;
}
