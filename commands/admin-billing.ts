import { iso } from '../src/clock.js';
import { assignPlan, creditBalance, grantWatermarkPass } from '../src/domain/billing/admin.js';
import { formatApusd } from '../src/domain/billing/format.js';
import { recentDeposits } from '../src/domain/billing/deposit-view.js';
import { periodLabel, periodOf } from '../src/domain/billing/periods.js';
import { closePeriodsUntil, statementOf } from '../src/domain/billing/statement.js';
import { upcomingInvoice } from '../src/domain/billing/upcoming.js';
import { paging } from '../src/domain/validate.js';
import { badRequest } from '../src/errors.js';
import { depositBody, ledgerEntryBody, negativeBody, statementBody, upcomingBody } from '../src/present/billing.js';
import type { Context } from '../src/context.js';
import type { DbOptions } from './options.js';
import { type Output, printJson, printTable } from './output.js';
import { withContext } from './with-context.js';

// `drm admin billing …`: the same core calls as the admin API. Amounts print as APUSD to the cent.

const numberOf = (value: string | undefined, flag: string): number | undefined => {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw badRequest(`${flag} must be a number, got "${value}"`);
  return n;
};
const date = (ms: number | null) => (ms === null ? '' : iso(ms).slice(0, 19).replace('T', ' '));

export const show = (opts: DbOptions & { org?: string; limit: string; upcoming?: boolean; invoiceGrace?: string }) =>
  withContext(opts, async (ctx, out) => {
    const page = paging('1', opts.limit, 100);
    if (opts.org === undefined) {
      if (opts.upcoming) throw badRequest('--upcoming needs --org');
      return showNegative(ctx, out, page.limit);
    }
    if (opts.upcoming) return showUpcoming(ctx, out, opts.org);
    const s = await statementOf(ctx, opts.org, page);
    const shape = ctx.config.apiShape;
    if (out.json) {
      printJson(out, statementBody(s, shape));
      return 0;
    }
    const u = s.usage;
    out.write(`${s.organization.name} (${s.organization.id}), plan ${s.organization.plan}`);
    out.write(
      `balance ${formatApusd(u.balanceMicro)} APUSD; ` +
        `pending ${formatApusd(u.pendingChargesMicro)}; this month ` +
        `(${periodLabel(u.period)}) ${u.totalStreams} streams, ${u.totalBytes} ` +
        `bytes, ${formatApusd(u.amountDueMicro)} due so far`,
    );
    const since = s.organization.negativeSince;
    if (since !== null) {
      const refusedFrom = since + ctx.config.negativeGraceMs;
      out.write(`balance below zero since ${date(since)} UTC; new sessions refused from ${date(refusedFrom)} UTC`);
    }
    if (s.ledgerSumMicro !== s.organization.apusdBalanceMicro)
      out.error(`drm: the ledger sums to ${formatApusd(s.ledgerSumMicro)}, not the balance`);
    out.write('ledger');
    printTable(
      out,
      ['when (UTC)', 'kind', 'amount', 'balance after', 'reference', 'memo'],
      s.ledger.map((e) => [
        date(e.createdAt),
        e.kind,
        formatApusd(e.amountMicro),
        formatApusd(e.balanceAfterMicro),
        e.reference,
        e.memo,
      ]),
    );
    out.write(`invoices (${s.invoiceTotal} in all)`);
    printTable(
      out,
      ['period', 'invoice', 'streams', 'bytes', 'amount', 'status', 'paid (UTC)'],
      s.invoices.map((i) => [
        periodLabel({ start: i.periodStart, end: i.periodEnd }),
        i.id,
        i.totalStreams,
        i.totalBytes,
        formatApusd(i.amountMicro),
        i.paymentStatus,
        date(i.paidAt),
      ]),
    );
    return 0;
  });

/**
 * Without --org: the organizations whose balance is below zero, longest first, and whether their new sessions are
 * refused yet.
 */
async function showNegative(ctx: Context, out: Output, limit: number): Promise<number> {
  const now = ctx.clock.now();
  const grace = ctx.config.negativeGraceMs;
  const orgs = await ctx.repos.organizations.negative(limit);
  if (out.json) {
    printJson(out, { negative: orgs.map((o) => negativeBody(o, grace, now, ctx.config.apiShape)) });
    return 0;
  }
  if (orgs.length === 0) {
    out.write('no organization has a balance below zero');
    return 0;
  }
  out.write(`${orgs.length} organization(s) with a balance below zero (show one with --org)`);
  const rows = orgs.map((o) => {
    const refusedFrom = (o.negativeSince as number) + grace;
    const sessions = now >= refusedFrom ? 'refused (402)' : `refused from ${date(refusedFrom)}`;
    return [o.id, o.name, formatApusd(o.apusdBalanceMicro), date(o.negativeSince), sessions];
  });
  printTable(out, ['organization', 'name', 'balance', 'below zero since (UTC)', 'new sessions'], rows);
  return 0;
}

/** The next invoice as it stands (GET /billing/invoices/upcoming's computation and body). */
async function showUpcoming(ctx: Context, out: Output, organizationId: string): Promise<number> {
  const u = await upcomingInvoice(ctx, organizationId);
  if (out.json) {
    printJson(out, { organizationId, ...upcomingBody(u, ctx.config.apiShape) });
    return 0;
  }
  const { draft } = u;
  out.write(
    `upcoming invoice for ${periodLabel(draft.period)} as of ${date(u.asOf)} UTC ` +
      `(issued after ${date(u.finalizesAt)} UTC): ${formatApusd(draft.amountMicro)} ` +
      `APUSD, ${draft.totalStreams} streams, ${draft.totalBytes} bytes`,
  );
  const rows = draft.lines.map(({ line, periodStart }) => [
    periodLabel(periodOf(periodStart)),
    line.kind,
    line.description,
    line.quantity,
    formatApusd(line.amountMicro),
  ]);
  printTable(out, ['period', 'kind', 'description', 'quantity', 'amount'], rows);
  const autopay = u.autopay.enabled ? `on (${u.autopay.method})` : 'off';
  out.write(`autopay ${autopay}: ${u.autopay.action.replaceAll('_', ' ')}: ${u.autopay.reason}`);
  return 0;
}

export const closePeriodCommand = (opts: DbOptions & { period?: string; invoiceGrace?: string }) =>
  withContext(opts, async (ctx, out) => {
    const s = await closePeriodsUntil(ctx, opts.period);
    if (out.json)
      printJson(out, {
        success: s.failed === 0,
        period: periodLabel(s.period),
        issued: s.issued,
        existing: s.existing,
        failed: s.failed,
      });
    else
      out.write(
        `closed up to ${periodLabel(s.period)}: ${s.issued} invoice(s) ` +
          `issued${s.existing ? `, ${s.existing} issued before` : ''}`,
      );
    if (s.failed > 0)
      out.error(`drm: ${s.failed} organization(s) could not be closed or paid (see the log); run close-period again`);
    return s.failed > 0 ? 1 : 0;
  });

export const credit = (opts: DbOptions & { org: string; amount: string; reason?: string; key?: string }) =>
  withContext(opts, async (ctx, out) => {
    const body = { amount: numberOf(opts.amount, '--amount'), reason: opts.reason, idempotencyKey: opts.key };
    const { entry, applied } = await creditBalance(ctx, opts.org, body);
    if (out.json) printJson(out, { success: true, applied, entry: ledgerEntryBody(entry, ctx.config.apiShape) });
    else if (!applied)
      out.write(
        `credit ${opts.key} was made before (${formatApusd(entry.amountMicro)} APUSD ` +
          `on ${date(entry.createdAt)}): nothing more credited`,
      );
    else
      out.write(
        `credited ${formatApusd(entry.amountMicro)} APUSD; balance ${formatApusd(entry.balanceAfterMicro)} APUSD`,
      );
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
    const org = await assignPlan(ctx, opts.org, {
      plan: opts.plan,
      ...(opts.listPrices ? { terms: {} } : given && { terms }),
    });
    if (out.json) printJson(out, { success: true, plan: org.plan, terms: org.billingTerms });
    else
      out.write(
        `${org.name} is on ${org.plan}` +
          (org.billingTerms
            ? ` with its own prices ${JSON.stringify(org.billingTerms)} (micro-APUSD)`
            : ' at list prices'),
      );
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
      printTable(
        out,
        head,
        rows.map((d) => [
          date(d.createdAt),
          d.organizationId,
          formatApusd(d.amountMicro),
          d.status,
          d.confirmations ?? '',
          d.blockNumber,
          d.txHash,
          d.fromAddress,
        ]),
      );
      if (!ctx.config.chain)
        out.error('drm: no chain configured (--chain-rpc, --apusd-token): confirmations are not shown');
    }
    return 0;
  });
