import { Hono } from 'hono';
import type { Context } from '../../src/context.js';
import { paging } from '../../src/domain/validate.js';
import { listDeliveries, sendTestWebhook, updateWebhook } from '../../src/domain/webhooks/settings.js';
import { deliveryBody } from '../../src/present/deliveries.js';
import { reply } from '../reply.js';
import { readJson } from '../body.js';
import type { AppEnv } from '../env.js';
import { requireKey } from '../middleware/api-key.js';

export function webhookRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();
  app.use('*', requireKey(ctx, 'billing'));

  app.put('/', async (c) => {
    const body = await readJson(c, ctx.config.maxJsonBytes);
    return reply(c, await updateWebhook(ctx, c.get('auth'), body));
  });

  app.get('/deliveries', async (c) => {
    const page = paging(c.req.query('page'), c.req.query('limit'), 100);
    const rows = await listDeliveries(ctx, c.get('auth'), page);
    return reply(c, { deliveries: rows.map(deliveryBody), page: page.page, limit: page.limit });
  });

  app.post('/test', async (c) => reply(c, await sendTestWebhook(ctx, c.get('auth'))));

  return app;
}
