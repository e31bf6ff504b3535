import { Hono } from 'hono';
import type { Context } from '../../src/context.js';
import { badRequest } from '../../src/errors.js';
import { paging } from '../../src/domain/validate.js';
import { asObject, optionalString } from '../../src/domain/validate.js';
import { listViewers, searchByBinaryId, setViewerBlocked, viewerDetail } from '../../src/domain/viewers.js';
import { sessionBody, viewerBody, viewerSearchBody } from '../../src/present/streaming.js';
import { reply } from '../reply.js';
import { readJson } from '../body.js';
import type { AppEnv } from '../env.js';
import { requireKey } from '../middleware/api-key.js';

function blockedFilter(raw: string | undefined): boolean | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw badRequest('blocked must be true or false');
}

/** Section 4.5: the organization's viewers (scope stream); search by binaryId (scope forensics). */
export function viewerRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();

  app.get('/search', requireKey(ctx, 'forensics'), async (c) => {
    const found = await searchByBinaryId(ctx, c.get('auth'), c.req.query('binaryId'));
    return reply(c, { viewer: viewerSearchBody(found.viewer, found.organizationName) });
  });

  app.use('*', requireKey(ctx, 'stream'));

  app.get('/', async (c) => {
    const page = paging(c.req.query('page'), c.req.query('limit'), 200);
    const { viewers, total } = await listViewers(ctx, c.get('auth'), {
      blocked: blockedFilter(c.req.query('blocked')),
      ...page,
    });
    return reply(c, { viewers: viewers.map(viewerBody), total, page: page.page, limit: page.limit });
  });

  app.get('/:viewerId', async (c) => {
    const { viewer, sessions } = await viewerDetail(ctx, c.get('auth'), c.req.param('viewerId'));
    const now = ctx.clock.now();
    return reply(c, {
      ...viewerBody(viewer),
      streamSessions: sessions.map((s) => sessionBody(s, viewer.binaryId, now)),
    });
  });

  app.post('/:viewerId/block', async (c) => {
    const reason = optionalString(asObject(await readJson(c, ctx.config.maxJsonBytes)), 'reason', { max: 500 });
    await setViewerBlocked(ctx, c.get('auth'), c.req.param('viewerId'), true, reason);
    return reply(c, { success: true });
  });

  app.post('/:viewerId/unblock', async (c) => {
    await setViewerBlocked(ctx, c.get('auth'), c.req.param('viewerId'), false);
    return reply(c, { success: true });
  });

  return app;
}
