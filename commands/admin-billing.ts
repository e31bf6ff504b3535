import { iso } from '../src/clock.js';
import { assignPlan, creditBalance, grantWatermarkPass } from '../src/domain/billing/admin.js';
import { formatApusd } from '../src/domain/billing/format.js';
import { recentDeposits } from '../src/domain/billing/funding.js';
import { periodLabel } from '../src/domain/billing/periods.js';
import { closePeriodsUntil, statementOf } from '../src/domain/billing/statement.js';
import { paging } from '../src/domain/validate.js';
import { badRequest } from '../src/errors.js';
import { depositBody, ledgerEntryBody, statementBody } from '../src/present/billing.js';
import type { DbOptions } from './options.js';
import { printJson, printTable } from './output.js';
import { withContext } from './with-context.js';

// `drm admin billing …`: the same core calls as the admin API. Amounts print as APUSD to the cent.

const numberOf = (value: string | undefined, flag: string): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw badRequest(`${flag} must be a number, got "${value}"`);
  return n;
};
const date = (ms: number | null) => (ms === null ? '' : iso(ms).slice(0, 19).replace('T', ' '));

export const show = (opts: DbOptions & { org: string; limit: string }) =>
  withContext(opts, async (ctx, out) => {
    const page = paging('1', opts.limit, 100);
    const s = await statementOf(ctx, opts.org, page);
    const shape = ctx.config.apiShape;
    if (out.json) {
      printJson(out, statementBody(s, shape));
      return 0;
    }
    const u = s.usage;
    out.write(`${s.organization.name} (${s.organization.id}), plan ${s.organization.plan}`);
    out.write(`balance ${formatApusd(u.balanceMicro)} APUSD; pending ${formatApusd(u.pendingChargesMicro)}; this month (${periodLabel(u.period)}) ${u.totalStreams} streams, ${u.totalBytes} bytes, ${formatApusd(u.amountDueMicro)} due so far`);
    if (s.ledgerSumMicro !== s.organization.apusdBalanceMicro) out.error(`drm: the ledger sums to ${formatApusd(s.ledgerSumMicro)}, not the balance`);
    out.write('ledger');
    printTable(out, ['when (UTC)', 'kind', 'amount', 'balance after', 'reference', 'memo'], s.ledger.map((e) => [date(e.createdAt), e.kind, formatApusd(e.amountMicro), formatApusd(e.balanceAfterMicro), e.reference, e.memo]));
    out.write(`invoices (${s.invoiceTotal} in all)`);
    printTable(out, ['period', 'invoice', 'streams', 'bytes', 'amount', 'status', 'paid (UTC)'], s.invoices.map((i) => [periodLabel({ start: i.periodStart, end: i.periodEnd }), i.id, i.totalStreams, i.totalBytes, formatApusd(i.amountMicro), i.paymentStatus, date(i.paidAt)]));
    return 0;
  });

export const closePeriodCommand = (opts: DbOptions & { period?: string }) =>
  withContext(opts, async (ctx, out) => {
    const s = await closePeriodsUntil(ctx, opts.period);
    if (out.json) printJson(out, { success: s.failed === 0, period: periodLabel(s.period), issued: s.issued, existing: s.existing, failed: s.failed });
    else out.write(`closed up to ${periodLabel(s.period)}: ${s.issued} invoice(s) issued${s.existing ? `, ${s.existing} issued before` : ''}`);
    if (s.failed > 0) out.error(`drm: ${s.failed} organization(s) could not be closed or paid (see the log); run close-period again`);
    return s.failed > 0 ? 1 : 0;
  });

export const credit = (opts: DbOptions & { org: string; amount: string; reason?: string; key?: string }) =>
  withContext(opts, async (ctx, out) => {
    const body = { amount: numberOf(opts.amount, '--amount'), reason: opts.reason, idempotencyKey: opts.key };
    const { entry, applied } = await creditBalance(ctx, opts.org, body);
    if (out.json) printJson(out, { success: true, applied, entry: ledgerEntryBody(entry, ctx.config.apiShape) });
    else if (!applied) out.write(`credit ${opts.key} was made before (${formatApusd(entry.amountMicro)} APUSD on ${date(entry.createdAt)}): nothing more credited`);
    else out.write(`credited ${formatApusd(entry.amountMicro)} APUSD; balance ${formatApusd(entry.balanceAfterMicro)} APUSD`);
    return 0;
  });

interface PlanOptions extends DbOptions {
  org: string;
  plan: string;
  monthlyPrice?: string;
  annualPrice?: string;
  pricePerStream?: string;
  pricePerGb?: string;
  includedStreams?: string;
  includedGb?: string;
  revenueShare?: string;
  listPrices?: boolean;
}

export const plan = (opts: PlanOptions) =>
  withContext(opts, async (ctx, out) => {
    const terms = {
      monthlyPrice: numberOf(opts.monthlyPrice, '--monthly-price'),
      annualPrice: numberOf(opts.annualPrice, '--annual-price'),
      pricePerStream: numberOf(opts.pricePerStream, '--price-per-stream'),
      pricePerGb: numberOf(opts.pricePerGb, '--price-per-gb'),
      includedStreams: numberOf(opts.includedStreams, '--included-streams'),
      includedGb: numberOf(opts.includedGb, '--included-gb'),
      revenueSharePct: numberOf(opts.revenueShare, '--revenue-share'),
    };
    const given = Object.values(terms).some((v) => v !== undefined);
    const org = await assignPlan(ctx, opts.org, { plan: opts.plan, ...(opts.listPrices ? { terms: {} } : given && { terms }) });
    if (out.json) printJson(out, { success: true, plan: org.plan, terms: org.billingTerms });
    else out.write(`${org.name} is on ${org.plan}${org.billingTerms ? ` with its own prices ${JSON.stringify(org.billingTerms)} (micro-APUSD)` : ' at list prices'}`);
    return 0;
  });

export const pass = (opts: DbOptions & { org: string; days?: string; until?: string }) =>
  withContext(opts, async (ctx, out) => {
    const until = await grantWatermarkPass(ctx, opts.org, { days: numberOf(opts.days, '--days'), until: opts.until });
    if (out.json) printJson(out, { success: true, watermarkPassUntil: iso(until) });
    else out.write(`Watermark Pass until ${iso(until)}: watermarked ingest for this organization is free until then`);
    return 0;
  });

export const deposits = (opts: DbOptions & { org?: string; limit: string }) =>
  withContext(opts, async (ctx, out) => {
    const { limit } = paging('1', opts.limit, 200);
    const rows = await recentDeposits(ctx, { organizationId: opts.org, limit });
    if (out.json) printJson(out, { deposits: rows.map((d) => depositBody(d, ctx.config.apiShape)) });
    else {
      const head = ['when (UTC)', 'organization', 'amount', 'status', 'confirmations', 'block', 'transaction', 'from'];
      printTable(out, head, rows.map((d) => [date(d.createdAt), d.organizationId, formatApusd(d.amountMicro), d.status, d.confirmations ?? '', d.blockNumber, d.txHash, d.fromAddress]));
      if (!ctx.config.chain) out.error('drm: no chain configured (--chain-rpc, --apusd-token): confirmations are not shown');
    }
    return 0;
  });
