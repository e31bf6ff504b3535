import type { Context, FundRequest } from '../../context.js';
import type { OrganizationRow } from '../../db/repos/index.js';
import { badRequest, DrmError } from '../../errors.js';
import { toMicro } from '../money.js';
import { asObject, oneOf, optionalBoolean, optionalString } from '../validate.js';
import { payOpenInvoices } from './autopay.js';
import { ownCustomer } from './card-funding.js';
import { PAYMENT_METHODS, type PaymentMethodName } from '../../payments/methods.js';

/** The spec's maximum fund amount per request (section 8). */
export const MAX_FUND_APUSD = 1_000_000;

export interface AutopaySetting {
  autopayEnabled: boolean;
  method: PaymentMethodName | null;
}

/**
 * PUT (Shape A) or POST (Shape B) /billing/autopay: enabled is required; method defaults to apusd
 * when enabling; Shape B's customerId (the card processor's customer) is kept for card autopay.
 * Turning APUSD autopay on pays what is open and the balance covers, at once.
 */
export async function setAutopay(ctx: Context, org: OrganizationRow, body: unknown): Promise<AutopaySetting> {
  const f = asObject(body);
  const enabled = optionalBoolean(f, 'enabled');
  if (enabled === undefined) throw badRequest('enabled (true or false) is required');
  const method =
    oneOf(optionalString(f, 'method', { max: 20 }), 'method', PAYMENT_METHODS) ?? (enabled ? 'apusd' : null);
  const customerId = optionalString(f, 'customerId', { min: 1, max: 255 });
  // Only a customer the platform made for this organization: another's would put its invoices on someone else's card.
  if (customerId !== undefined && ctx.config.fiat && !(await ownCustomer(ctx, org, customerId))) {
    throw badRequest(`customer ${customerId} is not this organization's at the card processor`);
  }
  await ctx.repos.organizations.update(org.id, {
    autopayEnabled: enabled,
    autopayMethod: method ?? org.autopayMethod,
    ...(customerId !== undefined && { fiatCustomerId: customerId }),
  });
  if (enabled && method === 'apusd') await payOpenInvoices(ctx, org.id);
  return { autopayEnabled: enabled, method: method ?? null };
}

/** POST /billing/fund's body: method, and an amount 0 < a ≤ 1,000,000 APUSD with at most two decimals. */
export function readFundRequest(body: unknown): FundRequest {
  const f = asObject(body);
  const method = oneOf(optionalString(f, 'method', { max: 20 }), 'method', PAYMENT_METHODS);
  if (!method) throw badRequest(`method is required: one of ${PAYMENT_METHODS.join(', ')}`);
  const amount = f.amount;
  if (typeof amount !== 'number' || !Number.isFinite(amount)) throw badRequest('amount must be a number of APUSD');
  if (!(amount > 0) || amount > MAX_FUND_APUSD)
    throw badRequest(`amount must be above 0 and at most ${MAX_FUND_APUSD.toLocaleString('en-US')}`);
  const amountMicro = toMicro(amount);
  // An amount of money as people write it: dollars and cents (1 APUSD = 1 USD).
  if (amountMicro <= 0 || amountMicro % 10_000 !== 0 || Math.abs(amountMicro / 1e6 - amount) > 1e-9)
    throw badRequest('amount must have at most two decimals');
  const paymentIntentId = optionalString(f, 'paymentIntentId', { min: 1, max: 255 });
  return { method, amountMicro, ...(paymentIntentId !== undefined && { paymentIntentId }) };
}

export async function fund(
  ctx: Context,
  org: OrganizationRow,
  body: unknown,
  idempotencyKey?: string,
): Promise<Record<string, unknown>> {
  const request = readFundRequest(body);
  const method = ctx.payments[request.method];
  const off = method.unavailable(ctx.config);
  if (off)
    throw new DrmError(
      'PAYMENT_METHOD_NOT_CONFIGURED',
      `${off}; ask the operator, or have an admin credit the balance`,
    );
  return method.fund(ctx, org, { ...request, ...(idempotencyKey !== undefined && { idempotencyKey }) });
}
