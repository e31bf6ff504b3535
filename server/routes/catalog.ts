import { Hono } from 'hono';
import type { Context } from '../../src/context.js';
import { getLicensedContent, listCatalog } from '../../src/domain/catalog.js';
import { paging } from '../../src/domain/validate.js';
import { contentDetail, contentSummary } from '../../src/present/content.js';
import type { AppEnv } from '../env.js';
import { requireKey } from '../middleware/api-key.js';
import { baseUrl } from '../origin.js';

export function catalogRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();
  app.use('*', requireKey(ctx, 'catalog'));

  app.get('/', async (c) => {
    const page = paging(c.req.query('page'), c.req.query('limit'), 200);
    const items = await listCatalog(ctx, c.get('auth'), page);
    const base = baseUrl(c, ctx);
    return c.json({ content: items.map((i) => contentSummary(i, base)), page: page.page, limit: page.limit });
  });

  app.get('/:contentId', async (c) => {
    const item = await getLicensedContent(ctx, c.get('auth'), c.req.param('contentId'));
    return c.json(contentDetail(item, baseUrl(c, ctx)));
  });

  return app;
}
