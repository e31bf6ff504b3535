import type { ApiShape } from '../../src/config.js';
import { INTERVALS, PRODUCTS } from '../../src/domain/billing/subscriptions-rule.js';
import { PAYMENT_METHODS } from '../../src/payments/methods.js';
import { arrayOf, bool, int, nullable, num, object, ref, type Schema, str, time, uuid } from './build.js';
import { apusd } from './schemas-core.js';

// Section 2's usage, balance and invoice, and the billing this server adds (docs/billing.md),
// as src/present/billing.ts sends them.

const usageFields = {
  totalStreams: int(),
  totalBytes: int(),
  amountDue: apusd(),
  balance: apusd(),
  periodStart: time(),
  periodEnd: time(),
  pendingCharges: apusd(),
};

const balanceFields = {
  apusdBalance: apusd(),
  fiatBalance: apusd('how much of the balance came in by card payment'),
  pendingCharges: apusd(),
  availableBalance: apusd(),
};

function invoice(shape: ApiShape): Schema {
  return object(
    {
      id: uuid(),
      periodStart: time(),
      periodEnd: time(),
      totalStreams: int(),
      totalBytes: int(),
      amountApusd: apusd(),
      // Shape B's amountUsd (1 APUSD = 1 USD); a Shape A deployment leaves it out.
      ...(shape === 'b' && { amountUsd: num('USD') }),
      paymentStatus: str('e.g. open, paid'),
      issuedAt: time(),
      paidAt: nullable(time()),
      carriedInto: uuid('a void invoice below the card minimum: the invoice that took its amount'),
    },
    ['carriedInto'],
  );
}

const InvoiceLine = object({
  kind: str('subscription, streams, gb, revenue_share, late_usage or carried_forward'),
  description: str(),
  periodStart: time(),
  quantity: int(),
  unitPrice: num('APUSD'),
  amount: apusd(),
});

/** GET /billing/invoices/upcoming (src/domain/billing/upcoming.ts). */
function upcoming(shape: ApiShape): Schema {
  return object({
    periodStart: time(),
    periodEnd: time(),
    totalStreams: int(),
    totalBytes: int(),
    amountApusd: apusd(),
    ...(shape === 'b' && { amountUsd: num('USD') }),
    lines: arrayOf(ref('InvoiceLine')),
    finalizesAt: time('when the period closer issues it: the end of the period plus the grace window'),
    asOf: time('when it was measured'),
    autopay: object({
      enabled: bool(),
      method: nullable({ type: 'string', enum: [...PAYMENT_METHODS] }),
      action: {
        type: 'string',
        enum: ['pay_from_balance', 'charge_card', 'carry_forward', 'none'],
        description: 'what autopay will do when the invoice is issued',
      },
      reason: str('the action in words, and why'),
    }),
  });
}

const Subscription = object({
  id: uuid(),
  product: { type: 'string', enum: [...PRODUCTS] },
  interval: { type: 'string', enum: [...INTERVALS] },
  price: apusd(),
  startedAt: time(),
  cancelledAt: nullable(time()),
  endsAt: nullable(time()),
});

/** POST /billing/fund answers per method and per step (funding.ts, card-funding.ts). */
const FundResult = {
  description:
    'APUSD: where to send the transfer (status pending until it is read from the ' +
    "chain), with Shape B's success, newBalance and transactionId. Card: the " +
    "payment intent's clientSecret to confirm, or, given a paymentIntentId, the " +
    'settled balance.',
  anyOf: [
    object({
      method: { type: 'string', const: 'apusd' },
      walletAddress: str('where to send the APUSD'),
      amount: apusd(),
      status: { type: 'string', const: 'pending' },
      success: bool(),
      newBalance: apusd(),
      transactionId: str(),
    }),
    object({
      method: { type: 'string', const: 'fiat_card' },
      clientSecret: str(),
      amount: apusd(),
      paymentIntentId: str(),
    }),
    object({
      success: bool(),
      newBalance: apusd(),
      transactionId: str(),
      method: { type: 'string', const: 'fiat_card' },
    }),
  ],
};

const AutopayResult = object({
  success: { type: 'boolean', const: true },
  autopayEnabled: bool(),
  method: nullable({ type: 'string', enum: [...PAYMENT_METHODS] }),
});

const LedgerEntry = object({
  id: uuid(),
  kind: str('deposit, credit, invoice_payment, watermark_fee, refund, …'),
  amount: apusd('signed'),
  balanceAfter: apusd(),
  amountMicroApusd: int('signed, in millionths of APUSD'),
  reference: nullable(str()),
  memo: nullable(str()),
  createdAt: time(),
});

const Statement = object({
  organizationId: uuid(),
  ...balanceFields,
  usage: ref('Usage'),
  ledgerMatchesBalance: bool(),
  negativeSince: {
    ...nullable(time()),
    description: 'when the balance went below zero (money taken back after it was spent); null while it is not',
  },
  ledger: arrayOf(ref('LedgerEntry')),
  invoices: arrayOf(ref('Invoice')),
  totalInvoices: int(),
});

const Deposit = object({
  id: uuid(),
  organizationId: uuid(),
  chainId: int(),
  txHash: str(),
  logIndex: int(),
  blockNumber: int(),
  from: str(),
  to: str(),
  amount: apusd(),
  amountMicroApusd: int(),
  status: str(),
  confirmations: nullable(int('null when no chain is configured or reachable')),
  createdAt: time(),
});

export function billingSchemas(shape: ApiShape): Record<string, Schema> {
  return {
    Usage: object(usageFields),
    Balance: object(balanceFields),
    Invoice: invoice(shape),
    InvoiceLine,
    InvoiceDetail: { allOf: [ref('Invoice'), object({ lines: arrayOf(ref('InvoiceLine')) })] },
    UpcomingInvoice: upcoming(shape),
    Subscription,
    FundResult,
    AutopayResult,
    LedgerEntry,
    Statement,
    Deposit,
  };
}
