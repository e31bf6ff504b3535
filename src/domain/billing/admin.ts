import type { Context } from '../../context.js';
import { newId } from '../../crypto/tokens.js';
import type { OrganizationRow } from '../../db/repos/index.js';
import { badRequest, DrmError, notFound } from '../../errors.js';
import { hasSixDecimalsAtMost, toMicro } from '../money.js';
import { PLAN_CODES } from '../plans.js';
import { asObject, oneOf, optionalNumber, optionalString, requiredString } from '../validate.js';
import { payOpenInvoices } from './autopay.js';
import { formatApusd } from './format.js';
import { type Posted, post } from './ledger.js';
import { readTerms } from './terms.js';

async function organization(ctx: Context, id: string): Promise<OrganizationRow> {
  const org = await ctx.repos.organizations.find(id);
  if (!org) throw notFound('organization');
  return org;
}

/**
 * An admin's credit to an organization's balance (a goodwill credit, a payment received
 * elsewhere): 0 < amount ≤ 1,000,000 APUSD. `idempotencyKey` makes a repeated request one credit;
 * without it every request is its own. Open invoices are paid from it when autopay is on.
 */
export async function creditBalance(ctx: Context, organizationId: string, body: unknown): Promise<Posted> {
  const f = asObject(body);
  const amount = f.amount;
  // one rule, said one way, whatever side of it the amount falls on
  if (typeof amount !== 'number' || !(amount > 0 && amount <= 1_000_000))
    throw badRequest('amount must be a number of APUSD above 0 and at most 1,000,000');
  const micro = toMicro(amount);
  if (micro <= 0 || !hasSixDecimalsAtMost(amount)) throw badRequest('amount has more than 6 decimals');
  const key = optionalString(f, 'idempotencyKey', { min: 8, max: 128 }) ?? newId();
  const memo = optionalString(f, 'reason', { max: 500 });
  await organization(ctx, organizationId);
  const posted = await ctx.db.transaction((tx) =>
    post(tx, {
      organizationId,
      kind: 'credit',
      amountMicro: micro,
      idempotencyKey: `credit:${organizationId}:${key}`,
      memo,
    }),
  );
  // A retry carries the same request; the same key with another amount is a mistake, not a retry.
  if (!posted.applied && posted.entry.amountMicro !== micro) {
    throw new DrmError(
      'IDEMPOTENCY_KEY_REUSED',
      `idempotencyKey ${key} credited ${formatApusd(posted.entry.amountMicro)} APUSD ` +
        `before, not ${formatApusd(micro)} APUSD`,
    );
  }
  await payOpenInvoices(ctx, organizationId);
  return posted;
}

/**
 * An admin assigns a plan (paid, enterprise, white-label) and, for a contract, the organization's
 * own prices: monthlyPrice, annualPrice, pricePerStream, pricePerGb (APUSD), includedStreams,
 * includedGb, revenueSharePct. Fields left out keep the plan's list price; `terms: {}` clears them.
 * New prices apply to periods not yet invoiced and to subscriptions made from then on.
 */
export async function assignPlan(ctx: Context, organizationId: string, body: unknown): Promise<OrganizationRow> {
  const f = asObject(body);
  const plan = oneOf(requiredString(f, 'plan', { max: 20 }), 'plan', PLAN_CODES) as string;
  const terms = f.terms === undefined ? undefined : readTerms(f.terms);
  const org = await organization(ctx, organizationId);
  const patch = {
    plan,
    ...(terms !== undefined && {
      billingTerms: Object.keys(terms).length > 0 ? (terms as Record<string, number>) : null,
    }),
  };
  await ctx.repos.organizations.update(org.id, patch);
  return { ...org, ...patch };
}

/** A Watermark Pass until an instant (ISO time, or `days` from now): the watermark fee is waived until then. */
export async function grantWatermarkPass(ctx: Context, organizationId: string, body: unknown): Promise<number> {
  const f = asObject(body);
  const until = optionalString(f, 'until', { max: 40 });
  const days = optionalNumber(f, 'days', { min: 1, max: 3660, integer: true });
  if ((until === undefined) === (days === undefined))
    throw badRequest('give either until (an ISO time) or days (1 to 3660)');
  const now = ctx.clock.now();
  const at = until !== undefined ? Date.parse(until) : now + (days as number) * 86_400_000;
  if (!Number.isFinite(at) || at <= now) throw badRequest('until must be an ISO time in the future');
  await organization(ctx, organizationId);
  await ctx.repos.organizations.update(organizationId, { watermarkPassUntil: at });
  return at;
}
