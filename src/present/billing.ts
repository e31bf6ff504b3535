import { iso } from '../clock.js';
import type { ApiShape } from '../config.js';
import type { InvoiceLineRow, InvoiceRow, LedgerRow, OrganizationRow, SubscriptionRow } from '../db/repos/index.js';
import type { UsageSoFar } from '../domain/billing/account.js';
import type { Statement } from '../domain/billing/statement.js';
import type { UpcomingInvoice } from '../domain/billing/upcoming.js';
import { shownAmount, shownLineAmounts } from '../domain/billing/format.js';
import type { DepositView } from '../domain/billing/deposit-view.js';

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
    // a void invoice whose amount a later one took (below the card minimum): which one
    ...(i.carriedInto !== null && { carriedInto: i.carriedInto }),
  };
}

type ShownLine = Omit<InvoiceLineRow, 'id' | 'invoiceId'>;

/** An invoice's lines as shown: their amounts add up to the invoice's total as shown (shownLineAmounts). */
export function invoiceLinesBody(lines: readonly ShownLine[], shape: ApiShape) {
  const amounts = shownLineAmounts(
    lines.map((l) => l.amountMicro),
    shape,
  );
  return lines.map((l, i) => ({
    kind: l.kind,
    description: l.description,
    periodStart: iso(l.periodStart),
    quantity: l.quantity,
    unitPrice: l.unitPriceMicro / 1_000_000,
    amount: amounts[i] as number,
  }));
}

/** GET /billing/invoices/upcoming: the next invoice as it stands, as an invoice is shown, and what autopay will do. */
export function upcomingBody(u: UpcomingInvoice, shape: ApiShape) {
  const { draft } = u;
  return {
    periodStart: iso(draft.period.start),
    periodEnd: iso(draft.period.end),
    totalStreams: draft.totalStreams,
    totalBytes: draft.totalBytes,
    amountApusd: shownAmount(draft.amountMicro, shape),
    ...(shape === 'b' && { amountUsd: shownAmount(draft.amountMicro, shape) }),
    lines: invoiceLinesBody(
      draft.lines.map(({ line, periodStart }) => ({ ...line, periodStart })),
      shape,
    ),
    finalizesAt: iso(u.finalizesAt),
    asOf: iso(u.asOf),
    autopay: u.autopay,
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
    // below zero since then (money taken back after it was spent); null while it is not
    negativeSince: s.organization.negativeSince === null ? null : iso(s.organization.negativeSince),
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

/** An organization whose balance is below zero, as `drm admin billing show` lists it. */
export function negativeBody(o: OrganizationRow, graceMs: number, now: number, shape: ApiShape) {
  const since = o.negativeSince as number;
  return {
    organizationId: o.id,
    name: o.name,
    balance: shownAmount(o.apusdBalanceMicro, shape),
    balanceMicroApusd: o.apusdBalanceMicro,
    negativeSince: iso(since),
    sessionsRefusedFrom: iso(since + graceMs),
    sessionsRefused: now >= since + graceMs,
  };
}
