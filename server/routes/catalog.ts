import { type Context as HonoContext, Hono } from 'hono';
import type { Context } from '../../src/context.js';
import type { CatalogRow } from '../../src/db/repos/index.js';
import { getLicensedContent, listCatalog, publishedFile } from '../../src/domain/catalog.js';
import { PREVIEW_FILE, THUMBNAIL_FILE } from '../../src/domain/ingest/previews.js';
import { paging } from '../../src/domain/validate.js';
import { contentDetail, contentSummary } from '../../src/present/content.js';
import { reply, replyJsonText, sharedJson } from '../reply.js';
import type { AppEnv } from '../env.js';
import { streamBody } from '../file-body.js';
import { requireKey } from '../middleware/api-key.js';
import { baseUrl } from '../origin.js';

export function catalogRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();
  // Pictures of an item for the organizations' own pages (an <img> or <video> cannot send a key):
  // served to anyone holding the content's UUID. The preview is 10 s at 360p, unmarked.
  const picture = (name: string, type: string) => async (c: HonoContext<AppEnv>) =>
    streamBody(c, await publishedFile(ctx, c.req.param('contentId') as string, name), {
      'Content-Type': type,
      'Cache-Control': 'public, max-age=86400',
      'Access-Control-Allow-Origin': '*',
    });
  app.get('/:contentId/thumbnail.jpg', picture(THUMBNAIL_FILE, 'image/jpeg'));
  app.get('/:contentId/preview.mp4', picture(PREVIEW_FILE, 'video/mp4'));

  // The key guards the keyed routes only: on '*' it would also catch a wrong method on the open
  // pictures above and answer "API key missing" where NOT_FOUND is the truth.
  const keyed = requireKey(ctx, 'catalog');
  const pageJson = sharedJson<CatalogRow[]>();

  app.get('/', keyed, async (c) => {
    const page = paging(c.req.query('page'), c.req.query('limit'), 200);
    const items = await listCatalog(ctx, c.get('auth'), page);
    const base = baseUrl(c, ctx);
    const json = pageJson(items, `${page.page} ${page.limit} ${base}`, () => ({
      content: items.map((i) => contentSummary(i, base)),
      page: page.page,
      limit: page.limit,
    }));
    return replyJsonText(c, json);
  });

  app.get('/:contentId', keyed, async (c) => {
    const item = await getLicensedContent(ctx, c.get('auth'), c.req.param('contentId'));
    return reply(c, contentDetail(item, baseUrl(c, ctx)));
  });

  return app;
}
