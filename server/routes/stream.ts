import { type Context as HonoContext, Hono } from 'hono';
import { cors } from 'hono/cors';
import type { Context } from '../../src/context.js';
import {
  contentKey,
  createSession,
  endSession,
  ownSession,
  servedSegment,
  servingPlaylist,
  servingSession,
} from '../../src/domain/streaming.js';
import { createdSessionBody, sessionBody } from '../../src/present/streaming.js';
import { reply } from '../reply.js';
import { readJson } from '../body.js';
import { streamBody } from '../file-body.js';
import { clientInfo } from '../client.js';
import type { AppEnv } from '../env.js';
import type { AppMetrics } from '../metrics.js';
import { requireKey } from '../middleware/api-key.js';

const PRIVATE = { 'Cache-Control': 'private, no-store' };

/** How long a redirected segment's presigned URL works: enough to fetch it, too short to share it. */
const REDIRECT_SECONDS = 50;

/**
 * Section 4.4. Sessions are made, read and ended with an API key (scope stream); the playlist,
 * key and segments a player fetches are authorised by the session id alone (docs/api.md).
 */
export function streamRoutes(ctx: Context, metrics?: Pick<AppMetrics, 'sessionCreated' | 'segmentSent'>) {
  const app = new Hono<AppEnv>();
  const keyed = requireKey(ctx, 'stream');
  // Players run on the organizations' own sites: the capability URLs answer any origin (they
  // carry no cookies, and the session id is the whole authorisation).
  const anyOrigin = cors({ origin: '*', allowMethods: ['GET'] });
  for (const route of ['/:contentId/playlist', '/:contentId/key', '/:contentId/segment/:seg'])
    app.use(route, anyOrigin);

  app.get('/:contentId/playlist', async (c) => {
    const s = await servingSession(ctx, c.req.param('contentId'), c.req.query('session'));
    const headers = { ...c.get('answerHeaders'), 'Content-Type': 'application/vnd.apple.mpegurl', ...PRIVATE };
    return c.body(await servingPlaylist(ctx, s), 200, headers);
  });

  app.get('/:contentId/key', async (c) => {
    const s = await servingSession(ctx, c.req.param('contentId'), c.req.query('session'));
    const headers = { ...c.get('answerHeaders'), 'Content-Type': 'application/octet-stream', ...PRIVATE };
    return c.body(new Uint8Array(contentKey(ctx, s.content)), 200, headers);
  });

  app.get('/:contentId/segment/:seg', async (c) => {
    const s = await servingSession(ctx, c.req.param('contentId'), c.req.query('session'));
    const segment = servedSegment(ctx, s, c.req.param('seg'));
    const counted = (bytes: number) => {
      segment.countBytes(bytes);
      metrics?.segmentSent(bytes, s.serving.session.id);
    };
    if (ctx.config.storage.segmentDelivery === 'redirect') {
      // The store (or a CDN in front of it) sends the bytes; the server authorises and meters.
      // What a redirect hands out is counted whole, when it is handed out: the player's fetch is never seen.
      const signed = await ctx.storage.signedUrl(segment.storagePath, segment.name, REDIRECT_SECONDS);
      if (signed) {
        counted(signed.bytes);
        c.header('Cache-Control', PRIVATE['Cache-Control']);
        return c.redirect(signed.url, 302);
      }
    }
    return streamBody(
      c,
      await ctx.storage.open(segment.storagePath, segment.name),
      { 'Content-Type': 'video/mp2t', ...PRIVATE },
      counted,
    );
  });

  app.get('/sessions/:sessionId', keyed, async (c) => {
    const session = await ownSession(ctx, c.get('auth'), c.req.param('sessionId'));
    const viewer = await ctx.repos.viewers.find(session.viewerId);
    return reply(c, sessionBody(session, viewer?.binaryId ?? '', ctx.clock.now()));
  });

  const end = async (c: HonoContext<AppEnv>) => {
    await endSession(ctx, c.get('auth'), c.req.param('sessionId') as string);
    return reply(c, { success: true });
  };
  app.delete('/sessions/:sessionId', keyed, end); // Shape A
  app.delete('/:sessionId', keyed, end); // Shape B

  app.post('/:contentId', keyed, async (c) => {
    const body = await readJson(c, ctx.config.maxJsonBytes);
    const created = await createSession(ctx, c.get('auth'), c.req.param('contentId'), body, clientInfo(c, ctx));
    metrics?.sessionCreated();
    return reply(c, createdSessionBody(created), 201);
  });

  return app;
}
