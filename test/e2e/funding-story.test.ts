import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { apusdReader } from '../../src/chain/apusd-transfers.js';
import { resolveChainConfig } from '../../src/chain/config.js';
import { createContext } from '../../src/create-context.js';
import { scanDeposits } from '../../src/domain/billing/deposits.js';
import { closeDuePeriods } from '../../src/domain/billing/period-close.js';
import { periodLabel } from '../../src/domain/billing/periods.js';
import { WebhookWorker } from '../../src/domain/webhooks/worker.js';
import { createLogger } from '../../src/log.js';
import { resolveFiatConfig } from '../../src/payments/config.js';
import { billedOrg, getJson, type Json, stream, toNextMonth } from '../helpers/billing.js';
import { type CardStandIn, SECRET_KEY, startCardStandIn, WEBHOOK_SECRET } from '../helpers/card-processor.js';
import { type Chain, startChain } from '../helpers/chain.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';

// An organization funds 50 APUSD on the chain and 20 by card,
// streams, its period closes, autopay pays the invoice, its webhook receiver hears it (signatures
// checked), and the ledger, the balance in both shapes and the invoice agree to the micro-APUSD.
// DRM_STORY_TRANSCRIPT=1 prints what happened, step by step.

const say = (line: string) => {
  if (process.env.DRM_STORY_TRANSCRIPT) process.stdout.write(`${line}\n`);
};

interface Heard {
  type: string;
  verified: boolean;
  data: Json;
}

async function receiver(secret: () => string): Promise<{ url: string; heard: Heard[]; close(): Promise<void> }> {
  const heard: Heard[] = [];
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const expected = Buffer.from(createHmac('sha256', secret()).update(raw).digest('hex'));
      const given = Buffer.from(String(req.headers['x-service-signature'] ?? ''));
      const body = JSON.parse(raw) as Json;
      heard.push({
        type: body.type,
        verified: given.length === expected.length && timingSafeEqual(given, expected),
        data: body.data,
      });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    heard,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

describe.each(DIALECTS)('the funding story on %s', (dialect) => {
  let chain: Chain;
  let standIn: CardStandIn;
  let t: TestApp;
  let secret = '';
  let hook: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    [chain, standIn, hook] = await Promise.all([startChain(), startCardStandIn(), receiver(() => secret)]);
    const chainConfig = resolveChainConfig(
      {},
      { DRM_CHAIN_RPC: chain.rpcUrl, DRM_APUSD_TOKEN: chain.token, DRM_CONFIRMATIONS: '2', DRM_CHAIN_START_BLOCK: '0' },
    );
    const fiat = resolveFiatConfig(
      {},
      { DRM_FIAT_SECRET_KEY: SECRET_KEY, DRM_FIAT_WEBHOOK_SECRET: WEBHOOK_SECRET, DRM_FIAT_API_BASE: standIn.url },
    );
    t = await makeTestApp(dialect, { config: { chain: chainConfig, fiat, allowPrivateWebhooks: true } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await Promise.all([chain?.stop(), standIn?.close(), hook?.close()]);
  });

  it('funds 50 APUSD on the chain and 20 by card, streams, and autopay pays the invoice; everything agrees to the micro-APUSD', async () => {
    const org = await billedOrg(t, { pricePerStream: 2.5, name: 'Story Films' });
    secret = org.webhookSecret;
    await t.request('PUT', '/api/v1/webhook', { key: org.apiKey, body: { webhookUrl: hook.url } });
    await t.request('PUT', '/api/v1/billing/autopay', { key: org.apiKey, body: { enabled: true, method: 'apusd' } });
    say(`organization ${org.organizationId} registered; autopay apusd; licensed at 2.50 APUSD a stream`);

    const chainFund = (await (
      await t.request('POST', '/api/v1/billing/fund', { key: org.apiKey, body: { method: 'apusd', amount: 50 } })
    ).json()) as Json;
    say(`POST /billing/fund apusd 50 -> send to ${chainFund.walletAddress}, status ${chainFund.status}`);
    const tx = await chain.transfer(chainFund.walletAddress, 50_000_000n);
    await chain.mine(2);
    const scanned = await scanDeposits(
      t.ctx,
      t.ctx.config.chain as NonNullable<typeof t.ctx.config.chain>,
      apusdReader(chain.rpcUrl, chain.token),
    );
    say(
      `transfer ${tx} mined and 2 blocks on it (3 confirmations, as the deposits view counts them); the watcher credited ${scanned.credited}`,
    );

    const card = (await (
      await t.request('POST', '/api/v1/billing/fund', { key: org.apiKey, body: { method: 'fiat_card', amount: 20 } })
    ).json()) as Json;
    standIn.confirm(card.paymentIntentId);
    const event = standIn.event(card.paymentIntentId);
    const taken = (await (
      await t.request('POST', '/api/v1/billing/webhooks/fiat', {
        body: event.body,
        headers: { 'stripe-signature': event.signature },
      })
    ).json()) as Json;
    say(
      `POST /billing/fund fiat_card 20 -> ${card.paymentIntentId}; confirmed; signed payment_intent.succeeded -> credited ${taken.credited}`,
    );
    expect(await getJson(t, '/api/v1/billing/balance', org.apiKey)).toMatchObject({
      apusdBalance: 70,
      fiatBalance: 20,
    });

    for (let i = 0; i < 3; i++)
      await t.ctx.repos.sessions.addBytes(await stream(t, org.apiKey, org.content), 1_234_567);
    say('3 streams at 2.50, 3,703,701 bytes');
    toNextMonth(t);
    const closed = await closeDuePeriods(t.ctx);
    const [invoice] = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices as [Json];
    say(
      `period ${periodLabel(closed.period)} closed: invoice ${invoice.id} for ${invoice.amountApusd} APUSD, ${invoice.paymentStatus}`,
    );
    expect(invoice).toMatchObject({ totalStreams: 3, amountApusd: 7.5, amountUsd: 7.5, paymentStatus: 'paid' });

    await new WebhookWorker(t.ctx).tick();
    const told = hook.heard.filter((h) => h.type.startsWith('invoice.'));
    say(
      `the organization's receiver heard: ${told.map((h) => `${h.type} (signature ${h.verified ? 'verified' : 'WRONG'})`).join(', ')}`,
    );
    // delivered concurrently: in either order
    expect(told.map((h) => [h.type, h.verified, h.data.invoiceId]).sort()).toEqual([
      ['invoice.issued', true, invoice.id],
      ['invoice.paid', true, invoice.id],
    ]);

    const row = await t.ctx.repos.organizations.find(org.organizationId);
    const sum = await t.ctx.repos.ledger.sumOf(org.organizationId);
    const stored = await t.ctx.repos.invoices.find(invoice.id);
    expect([row?.apusdBalanceMicro, sum, stored?.amountMicro]).toEqual([62_500_000, 62_500_000, 7_500_000]);
    const ledger = (await t.ctx.repos.ledger.list(org.organizationId, { limit: 10, offset: 0 }))
      .map((e) => [e.kind, e.amountMicro])
      .sort();
    expect(ledger).toEqual([
      ['card_payment', 20_000_000],
      ['deposit', 50_000_000],
      ['invoice_payment', -7_500_000],
    ]);
    say(
      `ledger: ${ledger.map(([k, a]) => `${k} ${a}`).join(', ')}; sum ${sum} = balance ${row?.apusdBalanceMicro} micro-APUSD`,
    );

    const b = await getJson(t, '/api/v1/billing/balance', org.apiKey);
    const ctxA = await createContext(
      { ...t.ctx.config, apiShape: 'a' },
      { clock: t.clock, log: createLogger('silent') },
    );
    try {
      const appA = createApp(ctxA);
      const a = (await (
        await appA.request('/api/v1/billing/balance', { headers: { authorization: `Bearer ${org.apiKey}` } })
      ).json()) as Json;
      say(`balance, Shape B: ${JSON.stringify(b)}; Shape A: ${JSON.stringify(a)}`);
      expect(b).toEqual({ apusdBalance: 62.5, fiatBalance: 20, pendingCharges: 0, availableBalance: 62.5 });
      expect(a).toEqual({ apusdBalance: 63, fiatBalance: 20, pendingCharges: 0, availableBalance: 63 });
    } finally {
      await ctxA.db.close();
    }
  }, 120_000);
});
