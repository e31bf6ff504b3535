import { iso } from '../clock.js';
import type { ApiShape } from '../config.js';
import type { InvoiceLineRow, InvoiceRow, LedgerRow, SubscriptionRow } from '../db/repos/index.js';
import type { UsageSoFar } from '../domain/billing/account.js';
import type { Statement } from '../domain/billing/statement.js';
import { shownAmount } from '../domain/billing/format.js';
import type { DepositView } from '../domain/billing/funding.js';

// Shape A shows whole APUSD, Shape B decimals to the cent (billing/format.ts rounds, half up).

export function usageBody(u: UsageSoFar, shape: ApiShape) {
  return {
    totalStreams: u.totalStreams,
    totalBytes: u.totalBytes,
    amountDue: shownAmount(u.amountDueMicro, shape),
    balance: shownAmount(u.balanceMicro, shape),
    periodStart: iso(u.period.start),
    periodEnd: iso(u.period.end),
    pendingCharges: shownAmount(u.pendingChargesMicro, shape),
  };
}

export function balanceBody(u: UsageSoFar, shape: ApiShape) {
  return {
    apusdBalance: shownAmount(u.balanceMicro, shape),
    // Card payments become APUSD on arrival (1 APUSD = 1 USD); this is how much came in that way.
    fiatBalance: shownAmount(u.fiatMicro, shape),
    pendingCharges: shownAmount(u.pendingChargesMicro, shape),
    availableBalance: shownAmount(u.balanceMicro - u.pendingChargesMicro, shape),
  };
}

export function invoiceBody(i: InvoiceRow, shape: ApiShape) {
  return {
    id: i.id,
    periodStart: iso(i.periodStart),
    periodEnd: iso(i.periodEnd),
    totalStreams: i.totalStreams,
    totalBytes: i.totalBytes,
    amountApusd: shownAmount(i.amountMicro, shape),
    // 1 APUSD = 1 USD (spec section 1)
    ...(shape === 'b' && { amountUsd: shownAmount(i.amountMicro, shape) }),
    paymentStatus: i.paymentStatus,
    issuedAt: iso(i.issuedAt),
    paidAt: i.paidAt === null ? null : iso(i.paidAt),
  };
}

export function invoiceLineBody(l: InvoiceLineRow, shape: ApiShape) {
  return {
    kind: l.kind,
    description: l.description,
    periodStart: iso(l.periodStart),
    quantity: l.quantity,
    unitPrice: l.unitPriceMicro / 1_000_000,
    amount: shownAmount(l.amountMicro, shape),
  };
}

export function subscriptionBody(s: SubscriptionRow, shape: ApiShape) {
  return {
    id: s.id,
    product: s.product,
    interval: s.interval,
    price: shownAmount(s.priceMicro, shape),
    startedAt: iso(s.startedAt),
    cancelledAt: s.cancelledAt === null ? null : iso(s.cancelledAt),
    endsAt: s.endsAt === null ? null : iso(s.endsAt),
  };
}

export function ledgerEntryBody(e: LedgerRow, shape: ApiShape) {
  return {
    id: e.id,
    kind: e.kind,
    amount: shownAmount(e.amountMicro, shape),
    balanceAfter: shownAmount(e.balanceAfterMicro, shape),
    amountMicroApusd: e.amountMicro,
    reference: e.reference,
    memo: e.memo,
    createdAt: iso(e.createdAt),
  };
}

/** An organization's money as an operator sees it (admin API and `drm admin billing show --json`). */
export function statementBody(s: Statement, shape: ApiShape) {
  return {
    organizationId: s.organization.id,
    ...balanceBody(s.usage, shape),
    usage: usageBody(s.usage, shape),
    ledgerMatchesBalance: s.ledgerSumMicro === s.organization.apusdBalanceMicro,
    ledger: s.ledger.map((e) => ledgerEntryBody(e, shape)),
    invoices: s.invoices.map((i) => invoiceBody(i, shape)),
    totalInvoices: s.invoiceTotal,
  };
}

export function depositBody(d: DepositView, shape: ApiShape) {
  return {
    id: d.id,
    organizationId: d.organizationId,
    chainId: d.chainId,
    txHash: d.txHash,
    logIndex: d.logIndex,
    blockNumber: d.blockNumber,
    from: d.fromAddress,
    to: d.toAddress,
    amount: shownAmount(d.amountMicro, shape),
    amountMicroApusd: d.amountMicro,
    status: d.status,
    confirmations: d.confirmations,
    createdAt: iso(d.createdAt),
  };
}
