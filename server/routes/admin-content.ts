import { Hono } from 'hono';
import type { Context } from '../../src/context.js';
import { contentOverview, deleteContent } from '../../src/domain/content-admin.js';
import { OverviewReader } from '../../src/domain/operations/overview.js';
import { paging } from '../../src/domain/validate.js';
import { badRequest } from '../../src/errors.js';
import { contentAdminBody } from '../../src/present/content.js';
import { reply } from '../reply.js';
import type { AppEnv } from '../env.js';
import { requireAdmin } from '../middleware/admin.js';

/**
 * The operator's content management (docs/operations.md, "Content management"): list, show, delete; and the live view's
 * overview (drm top --server).
 */
export function adminContentRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();
  const admin = requireAdmin(ctx);
  app.use('/content', admin);
  app.use('/content/*', admin);
  app.use('/overview', admin);

  const overview = new OverviewReader(ctx);
  app.get('/overview', async (c) => reply(c, await overview.read(), 200, { 'Cache-Control': 'no-store' }));

  app.get('/content', async (c) => {
    const page = paging(c.req.query('page'), c.req.query('limit'), 200);
    const { rows, total } = await ctx.repos.contentAdmin.listAll(page.limit, page.offset);
    return reply(c, { content: rows.map((r) => contentAdminBody(r)), total, page: page.page, limit: page.limit });
  });

  app.get('/content/:id', async (c) => {
    const { content, ...refs } = await contentOverview(ctx, c.req.param('id'));
    return reply(c, contentAdminBody(content, refs));
  });

  app.delete('/content/:id', async (c) => {
    const force = c.req.query('force');
    if (force !== undefined && force !== 'true' && force !== 'false') throw badRequest('force must be true or false');
    return reply(c, { success: true, ...(await deleteContent(ctx, c.req.param('id'), { force: force === 'true' })) });
  });
  return app;
}
