import { Hono } from 'hono';
import type { Context, PaymentMethod } from '../../src/context.js';
import { ownInvoice, usageSoFar } from '../../src/domain/billing/account.js';
import { payInvoice } from '../../src/domain/billing/autopay.js';
import { fund, setAutopay } from '../../src/domain/billing/settings.js';
import { cancelSubscription, liveSubscriptions, subscribe } from '../../src/domain/billing/subscriptions.js';
import { upcomingInvoice } from '../../src/domain/billing/upcoming.js';
import { PLANS } from '../../src/domain/plans.js';
import { paging } from '../../src/domain/validate.js';
import {
  balanceBody,
  invoiceBody,
  invoiceLinesBody,
  subscriptionBody,
  upcomingBody,
  usageBody,
} from '../../src/present/billing.js';
import { reply } from '../reply.js';
import { readJson, readText } from '../body.js';
import type { AppEnv } from '../env.js';
import { requireKey } from '../middleware/api-key.js';
import { idempotent, keyOrganization } from '../middleware/idempotency.js';

/** Section 4.7 (scope billing) and the open plan list (4.2). docs/billing.md has the rules. */
export function billingRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();
  const shape = ctx.config.apiShape;
  const json = (c: Parameters<typeof readJson>[0]) => readJson(c, ctx.config.maxJsonBytes);
  app.get('/plans', (c) => reply(c, { plans: PLANS }));

  // The card processor's events: no key, the signature is the authentication; the card method takes them.
  // Read under the JSON limit: the route is open, and a body without a length is otherwise read whole.
  const cardEvents = ctx.payments.fiat_card.takeEvent as NonNullable<PaymentMethod['takeEvent']>;
  app.post('/webhooks/fiat', async (c) =>
    reply(c, await cardEvents(ctx, await readText(c, ctx.config.maxJsonBytes), c.req.header('stripe-signature'))),
  );

  // What is owed and paying it stay open to a suspended organization; the rest does not.
  const reading = requireKey(ctx, 'billing', { suspendedMay: true });
  const keyed = requireKey(ctx, 'billing');
  // Requests that move money take an Idempotency-Key: a retry is answered once.
  const idem = idempotent(ctx, keyOrganization);

  app.get('/usage', reading, async (c) => reply(c, usageBody(await usageSoFar(ctx, c.get('auth').org), shape)));
  app.get('/balance', reading, async (c) => reply(c, balanceBody(await usageSoFar(ctx, c.get('auth').org), shape)));

  app.get('/invoices', reading, async (c) => {
    const page = paging(c.req.query('page'), c.req.query('limit'), 100);
    const { rows, total } = await ctx.repos.invoices.list(c.get('auth').org.id, page);
    return reply(c, { invoices: rows.map((i) => invoiceBody(i, shape)), total, page: page.page, limit: page.limit });
  });
  // Before /invoices/:id, which would take "upcoming" for an id.
  app.get('/invoices/upcoming', reading, async (c) =>
    reply(c, upcomingBody(await upcomingInvoice(ctx, c.get('auth').org.id), shape)),
  );
  app.get('/invoices/:id', reading, async (c) => {
    const { invoice, lines } = await ownInvoice(ctx, c.get('auth').org, c.req.param('id'));
    return reply(c, { ...invoiceBody(invoice, shape), lines: invoiceLinesBody(lines, shape) });
  });
  app.post('/invoices/:id/pay', reading, idem, async (c) => {
    const { invoice } = await ownInvoice(ctx, c.get('auth').org, c.req.param('id'));
    return reply(c, invoiceBody(await payInvoice(ctx, invoice), shape));
  });

  app.post('/fund', reading, idem, async (c) =>
    reply(c, await fund(ctx, c.get('auth').org, await json(c), c.req.header('idempotency-key'))),
  );

  const autopay = async (c: Parameters<typeof readJson>[0]) => {
    const setting = await setAutopay(ctx, (c.get('auth') as AppEnv['Variables']['auth']).org, await json(c));
    return reply(c, { success: true, ...setting });
  };
  app.put('/autopay', keyed, autopay);
  app.post('/autopay', keyed, autopay);

  app.get('/subscriptions', reading, async (c) => {
    const rows = await liveSubscriptions(ctx, c.get('auth').org);
    return reply(c, { subscriptions: rows.map((s) => subscriptionBody(s, shape)) });
  });
  app.post('/subscriptions', keyed, idem, async (c) =>
    reply(c, subscriptionBody(await subscribe(ctx, c.get('auth').org, await json(c)), shape), 201),
  );
  // A suspended organization may still stop paying for what it no longer uses.
  app.delete('/subscriptions/:id', reading, async (c) =>
    reply(c, subscriptionBody(await cancelSubscription(ctx, c.get('auth').org, c.req.param('id')), shape)),
  );
  return app;
}
