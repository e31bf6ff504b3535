import { Hono } from 'hono';
import type { Context } from '../../src/context.js';
import {
  listOrganizations,
  reactivateOrganization,
  readRateLimitChange,
  setRateLimit,
  suspendOrganization,
} from '../../src/domain/admin/organizations.js';
import { issueNonce, verifySignIn } from '../../src/domain/admin/sign-in.js';
import { grantLicense } from '../../src/domain/licenses.js';
import { paging } from '../../src/domain/validate.js';
import { adminOrganizationBody } from '../../src/present/organizations.js';
import { reply } from '../reply.js';
import { readJson } from '../body.js';
import type { AppEnv } from '../env.js';
import { requireAdmin } from '../middleware/admin.js';
import { limitPerClient } from '../middleware/open-limit.js';
import { expectedHost } from '../origin.js';

export function adminRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();
  const json = (c: Parameters<typeof readJson>[0]) => readJson(c, ctx.config.maxJsonBytes);

  // Sign-in with Ethereum: open endpoints that yield the admin token.
  app.get('/auth/nonce', limitPerClient(ctx, 'nonce'), async (c) => reply(c, await issueNonce(ctx)));
  app.post('/auth/verify', async (c) => reply(c, await verifySignIn(ctx, await json(c), expectedHost(c, ctx))));

  // The guard covers the admin resources only: '*' would also catch a wrong method on the open
  // sign-in routes above and answer "needs a sign-in token" where NOT_FOUND is the truth.
  const admin = new Hono<AppEnv>();
  admin.use('/organizations/*', requireAdmin(ctx));

  admin.get('/organizations', async (c) => {
    const page = paging(c.req.query('page'), c.req.query('limit'), 500);
    const rows = await listOrganizations(ctx, page);
    return reply(c, {
      organizations: rows.map((o) => adminOrganizationBody(o, ctx.config.apiShape)),
      page: page.page,
      limit: page.limit,
    });
  });

  admin.post('/organizations/:id/license', async (c) => {
    const license = await grantLicense(ctx, c.req.param('id'), await json(c));
    return reply(c, { success: true, licenseId: license.id });
  });

  admin.post('/organizations/:id/rate-limit', async (c) => {
    await setRateLimit(ctx, c.req.param('id'), readRateLimitChange(await json(c)));
    return reply(c, { success: true });
  });

  admin.post('/organizations/:id/suspend', async (c) => {
    await suspendOrganization(ctx, c.req.param('id'), await json(c));
    return reply(c, { success: true });
  });

  admin.post('/organizations/:id/reactivate', async (c) => {
    await reactivateOrganization(ctx, c.req.param('id'));
    return reply(c, { success: true });
  });

  app.route('/', admin);
  return app;
}
