import { Hono } from 'hono';
import { reply } from './reply.js';
import { StaticMatchRouter } from './router.js';
import type { Context } from '../src/context.js';
import { ForensicsQueue } from '../src/domain/forensics/queue.js';
import type { TrafficMeter } from '../src/domain/operations/traffic-meter.js';
import { createMetrics } from './metrics.js';
import { readiness } from '../src/readiness.js';
import type { AppEnv } from './env.js';
import { onError, onNotFound } from './errors.js';
import { edge } from './middleware/edge.js';
import { adminRoutes } from './routes/admin.js';
import { adminBillingRoutes } from './routes/admin-billing.js';
import { adminContentRoutes } from './routes/admin-content.js';
import { adminForensicsRoutes } from './routes/admin-forensics.js';
import { authRoutes } from './routes/auth.js';
import { billingRoutes } from './routes/billing.js';
import { catalogRoutes } from './routes/catalog.js';
import { forensicsRoutes } from './routes/forensics.js';
import { openApiRoutes } from './routes/openapi.js';
import { streamRoutes } from './routes/stream.js';
import { viewerRoutes } from './routes/viewers.js';
import { webhookRoutes } from './routes/webhook.js';

export interface AppServices {
  /** runs leak analyses (default: a queue without its background loop; `drm serve` starts one) */
  forensics?: ForensicsQueue;
  /** counts traffic into the database for the live view (`drm serve` starts one) */
  traffic?: TrafficMeter;
}

/** The whole REST API of the spec as one hono app over a context; no sockets needed (app.request in tests). */
export function createApp(ctx: Context, services: AppServices = {}) {
  const metrics = createMetrics(ctx, services.traffic);
  const app = new Hono<AppEnv>({ router: new StaticMatchRouter() });
  app.use('*', edge(ctx, metrics, onError(ctx.log)));

  app.get('/health', (c) => reply(c, { ok: true }));
  app.get('/ready', async (c) => {
    const r = await readiness(ctx);
    return reply(c, r, r.ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => c.text(await metrics.text(), 200, { 'Content-Type': metrics.contentType }));
  app.route('/', openApiRoutes(ctx));
  app.route('/api/v1/auth', authRoutes(ctx));
  app.route('/api/v1/billing', billingRoutes(ctx));
  app.route('/api/v1/catalog', catalogRoutes(ctx));
  app.route('/api/v1/stream', streamRoutes(ctx, metrics));
  app.route('/api/v1/viewers', viewerRoutes(ctx));
  app.route('/api/v1/webhook', webhookRoutes(ctx));
  app.route('/api/v1/admin/forensics', adminForensicsRoutes(ctx));
  app.route('/api/v1/admin', adminBillingRoutes(ctx));
  app.route('/api/v1/admin', adminContentRoutes(ctx));
  app.route('/api/v1/admin', adminRoutes(ctx));
  app.route('/api/v1/forensics', forensicsRoutes(ctx, services.forensics ?? new ForensicsQueue(ctx)));

  app.notFound(onNotFound);
  app.onError(onError(ctx.log));
  return app;
}
