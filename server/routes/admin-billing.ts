import { Hono } from 'hono';
import type { Context } from '../../src/context.js';
import { assignPlan, creditBalance, grantWatermarkPass } from '../../src/domain/billing/admin.js';
import { periodLabel } from '../../src/domain/billing/periods.js';
import { closePeriodsUntil, statementOf } from '../../src/domain/billing/statement.js';
import { asObject, isUuid, optionalString, paging } from '../../src/domain/validate.js';
import { recentDeposits } from '../../src/domain/billing/deposit-view.js';
import { badRequest } from '../../src/errors.js';
import { iso } from '../../src/clock.js';
import { depositBody, ledgerEntryBody, statementBody } from '../../src/present/billing.js';
import { reply } from '../reply.js';
import { readJson } from '../body.js';
import { idempotent } from '../middleware/idempotency.js';
import type { AppEnv } from '../env.js';
import { requireAdmin } from '../middleware/admin.js';

/**
 * The operator's side of billing (docs/billing.md): credits, plans and contract prices, passes, statements, closing
 * periods.
 */
export function adminBillingRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();
  const shape = ctx.config.apiShape;
  const json = (c: Parameters<typeof readJson>[0]) => readJson(c, ctx.config.maxJsonBytes);
  // Only this file's paths: the sign-in routes beside them under /admin stay open.
  const admin = requireAdmin(ctx);
  for (const path of [
    '/organizations/:id/credit',
    '/organizations/:id/plan',
    '/organizations/:id/watermark-pass',
    '/organizations/:id/billing',
    '/billing/*',
  ]) {
    app.use(path, admin);
  }

  // Admin keys are the acted-on organization's: a retried credit or plan change is one change.
  const idem = idempotent(ctx, (c) => c.req.param('id') ?? '');
  app.post('/organizations/:id/credit', idem, async (c) => {
    const { entry, applied } = await creditBalance(ctx, c.req.param('id'), await json(c));
    return reply(c, { success: true, applied, entry: ledgerEntryBody(entry, shape) });
  });

  app.post('/organizations/:id/plan', idem, async (c) => {
    const org = await assignPlan(ctx, c.req.param('id'), await json(c));
    return reply(c, { success: true, plan: org.plan, terms: org.billingTerms });
  });

  app.post('/organizations/:id/watermark-pass', idem, async (c) => {
    const until = await grantWatermarkPass(ctx, c.req.param('id'), await json(c));
    return reply(c, { success: true, watermarkPassUntil: iso(until) });
  });

  app.get('/organizations/:id/billing', async (c) => {
    const page = paging(c.req.query('page'), c.req.query('limit'), 100);
    return reply(c, statementBody(await statementOf(ctx, c.req.param('id'), page), shape));
  });

  app.get('/billing/deposits', async (c) => {
    const { limit } = paging('1', c.req.query('limit'), 200);
    const organizationId = c.req.query('organizationId');
    if (organizationId !== undefined && !isUuid(organizationId))
      throw badRequest('organizationId must be an organization id');
    const rows = await recentDeposits(ctx, { organizationId, limit });
    return reply(c, { deposits: rows.map((d) => depositBody(d, shape)) });
  });

  app.post('/billing/close-period', async (c) => {
    const body = c.req.header('content-type') ? asObject(await json(c)) : {};
    const summary = await closePeriodsUntil(ctx, optionalString(body, 'period', { max: 20 }));
    return reply(c, {
      success: true,
      period: periodLabel(summary.period),
      issued: summary.issued,
      existing: summary.existing,
      failed: summary.failed,
    });
  });
  return app;
}
