import type { SubscriptionRow } from '../../db/repos/index.js';
import { monthsBetween, type Period, periodOf } from './periods.js';
import type { Line } from './pricing.js';

export const PRODUCTS = ['videos', 'music', 'flipbooks', 'cards', 'tickets'] as const;
export type Product = (typeof PRODUCTS)[number];
export const INTERVALS = ['month', 'year'] as const;
export type Interval = (typeof INTERVALS)[number];

/**
 * A subscription's charge in a period, if any. Monthly: every period it is live in, in full (a
 * month begun is a month paid; cancelling ends it at the end of the period). Yearly: the whole
 * year, prepaid, on the invoice of the period each 12-month term begins in; cancelling stops the
 * next term and refunds nothing.
 */
export function subscriptionCharge(s: SubscriptionRow, period: Period): Line | undefined {
  if (s.startedAt >= period.end) return undefined;
  if (s.endsAt !== null && s.endsAt <= period.start) return undefined;
  const first = periodOf(s.startedAt);
  const months = monthsBetween(first, period);
  if (s.interval === 'year' && months % 12 !== 0) return undefined;
  const term = s.interval === 'year' ? `year ${months / 12 + 1}` : 'month';
  return {
    kind: 'subscription',
    description: `${s.product} subscription, ${term}`,
    quantity: 1,
    unitPriceMicro: s.priceMicro,
    amountMicro: s.priceMicro,
  };
}

/** Where a subscription cancelled at `now` stops: the end of its month, or of its current year. */
export function endOnCancel(s: SubscriptionRow, now: number): number {
  const current = periodOf(now);
  if (s.interval === 'month') return current.end;
  const first = periodOf(s.startedAt);
  const termsBegun = Math.floor(monthsBetween(first, current) / 12) + 1;
  const d = new Date(first.start);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 12 * termsBegun, 1);
}
