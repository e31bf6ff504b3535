import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/clock.js';
import { resolveConfig } from '../../src/config.js';
import type { Context } from '../../src/context.js';
import { createContext } from '../../src/create-context.js';
import { periodOf, previousPeriod } from '../../src/domain/billing/periods.js';
import { takeRefund } from '../../src/domain/billing/card-reversals.js';
import { setAutopay } from '../../src/domain/billing/settings.js';
import type { CardProcessor } from '../../src/payments/processor.js';
import { subscribe } from '../../src/domain/billing/subscriptions.js';
import { registerOrganization } from '../../src/domain/organizations.js';
import { createLogger } from '../../src/log.js';
import { type CardStandIn, SECRET_KEY, startCardStandIn, WEBHOOK_SECRET } from '../helpers/card-processor.js';
import { runDrm } from '../helpers/serve-process.js';

// `drm admin billing close-period` is a process of its own: its context carries the card method
// when the processor's keys are in its environment, so an invoice it issues under card autopay is
// charged there and then, and tried again on its schedule after a decline.

const T = 120_000;

describe('drm admin billing close-period with card autopay', () => {
  let dir: string;
  let standIn: CardStandIn;
  let orgId: string;
  let env: NodeJS.ProcessEnv;
  let paidIntent: string;

  /** A context of the data directory, its clock at `at`; the processor's keys in its config. */
  const open = (at: number) =>
    createContext(resolveConfig({ dataDir: dir, logLevel: 'silent' }, env), {
      clock: new ManualClock(at),
      log: createLogger('silent'),
    });
  const withCtx = async <T>(at: number, fn: (ctx: Context) => Promise<T>): Promise<T> => {
    const ctx = await open(at);
    try {
      return await fn(ctx);
    } finally {
      await ctx.db.close();
    }
  };
  const chargesOf = (invoiceId: string) =>
    [...standIn.intents.values()].filter((i) => i.metadata.invoiceId === invoiceId);
  const closePeriod = () => runDrm(['admin', 'billing', 'close-period', '--data-dir', dir, '--json'], env, T);

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-card-autopay-'));
    standIn = await startCardStandIn();
    env = { DRM_FIAT_SECRET_KEY: SECRET_KEY, DRM_FIAT_WEBHOOK_SECRET: WEBHOOK_SECRET, DRM_FIAT_API_BASE: standIn.url };
    // Everything happens in last month, so that the month has ended when the command runs.
    const lastMonth = previousPeriod(periodOf(Date.now())).start + 9 * 86_400_000;
    await withCtx(lastMonth, async (ctx) => {
      const org = (await registerOrganization(ctx, { name: 'Card Studio' }, 'paid')).organization;
      orgId = org.id;
      await subscribe(ctx, org, { product: 'videos', interval: 'month' });
      const customerId = await standIn.customer(org.id, 'pm_card_chargeDeclined');
      await setAutopay(ctx, org, { enabled: true, method: 'fiat_card', customerId });
    });
  }, T);
  afterAll(async () => {
    await standIn?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it(
    'charges the card once when it issues the invoice, and again on the schedule after a decline',
    async () => {
      const first = await closePeriod();
      expect(first.code, first.stderr).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({ success: true, issued: 1 });
      const invoice = await withCtx(Date.now(), async (ctx) => (await ctx.repos.invoices.open(orgId))[0]);
      expect(invoice).toMatchObject({ amountMicro: 99_000_000, paymentStatus: 'open', autopayAttempts: 1 });
      expect(invoice?.nextAutopayAt).toBeGreaterThan(Date.now());
      const invoiceId = invoice?.id as string;
      expect(chargesOf(invoiceId)).toEqual([
        expect.objectContaining({ amount: 9900, status: 'requires_payment_method' }),
      ]);

      // Nothing is due yet: running the command again charges nothing.
      expect((await closePeriod()).code).toBe(0);
      expect(chargesOf(invoiceId)).toHaveLength(1);

      // An hour on (the schedule's time moved back instead), with a working card on file.
      await withCtx(Date.now(), async (ctx) => {
        const customerId = await standIn.customer(orgId, 'pm_card_visa');
        await ctx.repos.organizations.update(orgId, { fiatCustomerId: customerId });
        await ctx.repos.invoices.scheduleAutopay(invoiceId, 1, Date.now() - 1000);
      });
      expect((await closePeriod()).code).toBe(0);
      expect(chargesOf(invoiceId).map((i) => i.status)).toEqual(['requires_payment_method', 'succeeded']);
      const paid = await withCtx(Date.now(), async (ctx) => ({
        invoice: await ctx.repos.invoices.find(invoiceId),
        ledger: (await ctx.repos.ledger.list(orgId, { limit: 10, offset: 0 }))
          .map((e) => [e.kind, e.amountMicro])
          .sort(),
      }));
      expect(paid.invoice).toMatchObject({ paymentStatus: 'paid', autopayAttempts: 2, nextAutopayAt: null });
      expect(paid.ledger).toEqual([
        ['card_payment', 99_000_000],
        ['invoice_payment', -99_000_000],
      ]);

      expect((await closePeriod()).code).toBe(0);
      expect(chargesOf(invoiceId)).toHaveLength(2);
      paidIntent = chargesOf(invoiceId)[1]?.id as string;
    },
    T,
  );

  it(
    'lists the organization once a refund of the spent payment takes its balance below zero',
    async () => {
      const chargeId = standIn.refund(paidIntent, 9900);
      await withCtx(Date.now(), async (ctx) => {
        const processor = await (ctx.cardProcessor as () => Promise<CardProcessor>)();
        expect(await takeRefund(ctx, processor, chargeId, { id: 'evt_refund_cli', type: 'charge.refunded' })).toBe(
          true,
        );
      });
      const listed = await runDrm(['admin', 'billing', 'show', '--data-dir', dir, '--json'], env, T);
      expect(JSON.parse(listed.stdout).negative).toEqual([
        expect.objectContaining({ organizationId: orgId, balance: -99, sessionsRefused: false }),
      ]);
      const table = await runDrm(['admin', 'billing', 'show', '--data-dir', dir], env, T);
      expect(table.stdout).toMatch(/1 organization\(s\) with a balance below zero/);
      expect(table.stdout).toMatch(new RegExp(`${orgId}.*Card Studio.*-99\\.00.*refused from`));
    },
    T,
  );
});
