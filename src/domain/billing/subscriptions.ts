import type { Context } from '../../context.js';
import { newId } from '../../crypto/tokens.js';
import type { OrganizationRow, SubscriptionRow } from '../../db/repos/index.js';
import { badRequest, DrmError, notFound } from '../../errors.js';
import { asObject, isUuid, oneOf, requiredString } from '../validate.js';
import { endOnCancel, INTERVALS, PRODUCTS } from './subscriptions-rule.js';
import { termsOf } from './terms.js';

/** Every subscription still charged now or later, one per product at most. */
export const liveSubscriptions = (ctx: Context, org: OrganizationRow): Promise<SubscriptionRow[]> =>
  ctx.repos.subscriptions.liveAt(org.id, ctx.clock.now());

/**
 * Subscribes the organization to one product, monthly or yearly, at its terms' price (the Paid
 * plan: 99 a month or 1,009.80 a year). A White-Label contract runs by the year only. A product
 * already subscribed (and not ended) is a CONFLICT: cancel it first to change the interval.
 */
export async function subscribe(ctx: Context, org: OrganizationRow, body: unknown): Promise<SubscriptionRow> {
  const f = asObject(body);
  const product = oneOf(requiredString(f, 'product', { max: 20 }), 'product', PRODUCTS) as string;
  const interval = oneOf(requiredString(f, 'interval', { max: 10 }), 'interval', INTERVALS) as string;
  if (org.plan === 'white-label' && interval === 'month') throw badRequest('a White-Label contract is billed by the year: interval must be year');
  const terms = termsOf(org);
  const now = ctx.clock.now();
  return ctx.db.transaction(async (tx) => {
    // Serializes subscribing per organization on Postgres (the balance row's lock), so two
    // requests cannot both find the product free.
    await tx.repos.ledger.lockBalance(org.id);
    const live = await tx.repos.subscriptions.liveAt(org.id, now);
    if (live.some((s) => s.product === product)) throw new DrmError('CONFLICT', `${product} is subscribed already; cancel it first to change the interval`);
    const row: SubscriptionRow = {
      id: newId(),
      organizationId: org.id,
      product,
      interval,
      priceMicro: interval === 'year' ? terms.annualPriceMicro : terms.monthlyPriceMicro,
      startedAt: now,
      endsAt: null,
      cancelledAt: null,
      createdAt: now,
    };
    await tx.repos.subscriptions.insert(row);
    return row;
  });
}

/**
 * Cancels a subscription: a monthly one ends with the current month, a yearly one with its
 * current year (prepaid, not refunded). Cancelling again changes nothing.
 */
export async function cancelSubscription(ctx: Context, org: OrganizationRow, id: string): Promise<SubscriptionRow> {
  const s = isUuid(id) ? await ctx.repos.subscriptions.find(id) : undefined;
  if (!s || s.organizationId !== org.id) throw notFound('subscription');
  if (s.cancelledAt !== null) return s;
  const now = ctx.clock.now();
  const endsAt = endOnCancel(s, now);
  await ctx.repos.subscriptions.cancel(s.id, now, endsAt);
  return { ...s, cancelledAt: now, endsAt };
}
