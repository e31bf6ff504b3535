import type { Context } from '../../context.js';
import { refuseWhileNegative } from './negative-balance.js';
import { newId } from '../../crypto/tokens.js';
import type { OrganizationRow, SubscriptionRow } from '../../db/repos/index.js';
import { badRequest, DrmError, notFound } from '../../errors.js';
import { asObject, isUuid, oneOf, requiredString } from '../validate.js';
import { endOnCancel, INTERVALS, PRODUCTS } from './subscriptions-rule.js';
import { termsOf } from './terms.js';

/** Every subscription still charged now or later, one per product at most. */
export const liveSubscriptions = (ctx: Context, org: OrganizationRow): Promise<SubscriptionRow[]> =>
  ctx.repos.subscriptions.liveAt(org.id, ctx.clock.now());

/** Subscriptions live or ending at once (five products, and a few changes of interval). */
const MAX_LIVE = 20;

/**
 * Subscribes the organization to one product, monthly or yearly, at its terms' price (the Paid
 * plan: 99 a month or 1,009.80 a year). A White-Label contract runs by the year only. A product
 * already subscribed is a CONFLICT: cancel it first to change the interval, and the new one starts
 * when the cancelled one ends.
 */
export async function subscribe(ctx: Context, org: OrganizationRow, body: unknown): Promise<SubscriptionRow> {
  refuseWhileNegative(ctx, org, 'a new subscription');
  const f = asObject(body);
  const product = oneOf(requiredString(f, 'product', { max: 20 }), 'product', PRODUCTS) as string;
  const interval = oneOf(requiredString(f, 'interval', { max: 10 }), 'interval', INTERVALS) as string;
  if (org.plan === 'white-label' && interval === 'month')
    throw badRequest('a White-Label contract is billed by the year: interval must be year');
  const terms = termsOf(org);
  const now = ctx.clock.now();
  return ctx.db.transaction(async (tx) => {
    // Serializes subscribing per organization on Postgres (the balance row's lock), so two
    // requests cannot both find the product free.
    await tx.repos.ledger.lockBalance(org.id);
    const live = await tx.repos.subscriptions.liveAt(org.id, now);
    const same = live.filter((s) => s.product === product);
    if (same.some((s) => s.cancelledAt === null))
      throw new DrmError('CONFLICT', `${product} is subscribed already; cancel it first to change the interval`);
    if (live.length >= MAX_LIVE)
      throw new DrmError(
        'CONFLICT',
        `${MAX_LIVE} subscriptions are live or ending; wait for the cancelled ones to end`,
      );
    // A product cancelled but still running: the new subscription takes over where it ends.
    const startedAt = Math.max(now, ...same.map((s) => s.endsAt as number));
    const row: SubscriptionRow = {
      id: newId(),
      organizationId: org.id,
      product,
      interval,
      priceMicro: interval === 'year' ? terms.annualPriceMicro : terms.monthlyPriceMicro,
      startedAt,
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
