import { Hono } from 'hono';
import { PLANS } from '../../src/domain/plans.js';
import type { AppEnv } from '../env.js';

/** GET /billing/plans is open (section 5.3); the rest of /billing needs the billing scope. */
export function planRoutes() {
  const app = new Hono<AppEnv>();
  app.get('/plans', (c) => c.json({ plans: PLANS }));
  return app;
}
