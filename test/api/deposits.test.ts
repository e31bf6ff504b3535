import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveChainConfig } from '../../src/chain/config.js';
import { apusdReader } from '../../src/chain/apusd-transfers.js';
import { createContext } from '../../src/create-context.js';
import { FUND_REQUEST_TTL_MS, scanDeposits } from '../../src/domain/billing/deposits.js';
import { HOUR_MS } from '../../src/clock.js';
import { createLogger } from '../../src/log.js';
import { type Json, getJson, toNextMonth } from '../helpers/billing.js';
import { closeDuePeriods } from '../../src/domain/billing/period-close.js';
import { expectError } from '../helpers/expect-error.js';
import { type Chain, startChain } from '../helpers/chain.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { registerOrg } from '../helpers/fixtures.js';
import { adminToken } from '../helpers/admin.js';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');

// APUSD sent to an organization's deposit address on a real chain (anvil, the
// project's token compiled with solc-js) is credited once it has its confirmations, exactly once
// however many watchers read it, and a restart goes on from the stored cursor.

describe.each(DIALECTS)('APUSD deposits on %s', (dialect) => {
  let chain: Chain;
  let t: TestApp;
  const env = () => ({
    DRM_CHAIN_RPC: chain.rpcUrl,
    DRM_APUSD_TOKEN: chain.token,
    DRM_CONFIRMATIONS: '2',
    DRM_CHAIN_START_BLOCK: '0',
  });

  beforeAll(async () => {
    chain = await startChain();
    t = await makeTestApp(dialect, { config: { chain: resolveChainConfig({}, env()) } });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await chain?.stop();
  });

  const scan = (ctx = t.ctx) =>
    scanDeposits(ctx, ctx.config.chain as NonNullable<typeof ctx.config.chain>, apusdReader(chain.rpcUrl, chain.token));

  it('answers a fund request with the deposit address, and credits the transfer once it has 2 confirmations, once', async () => {
    const org = await registerOrg(t);
    const res = await t.request('POST', '/api/v1/billing/fund', {
      key: org.apiKey,
      body: { method: 'apusd', amount: 50 },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const fund = (await res.json()) as Json;
    expect(fund).toMatchObject({
      method: 'apusd',
      walletAddress: org.walletAddress.toLowerCase(),
      amount: 50,
      status: 'pending',
    });

    await chain.transfer(fund.walletAddress, 50_000_000n);
    expect((await scan()).credited).toBe(0);
    await chain.mine(2);
    // two passes at once, as two servers would: one credit
    const [a, b] = await Promise.all([scan(), scan()]);
    expect(a.credited + b.credited).toBe(1);
    expect(await getJson(t, '/api/v1/billing/balance', org.apiKey)).toMatchObject({ apusdBalance: 50 });
    expect((await scan()).credited).toBe(0);
    const [deposit] = await t.ctx.repos.deposits.list(org.organizationId, 10);
    expect(deposit).toMatchObject({ amountMicro: 50_000_000, status: 'credited', toAddress: fund.walletAddress });
    // the fund request said 50: the deposit is recorded as what it expected (Shape B's transactionId)
    expect(await t.ctx.repos.deposits.findFundRequest(fund.transactionId)).toMatchObject({
      status: 'received',
      depositId: deposit?.id,
    });
    expect(await t.ctx.repos.ledger.sumOf(org.organizationId)).toBe(50_000_000);
    await chain.mine(1);
    const token = await adminToken(t);
    const view = await t.request('GET', `/api/v1/admin/billing/deposits?organizationId=${org.organizationId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await view.json()) as Json).deposits).toEqual([
      expect.objectContaining({ amount: 50, status: 'credited', confirmations: 4, to: fund.walletAddress }),
    ]);
  }, 60_000);

  it('gives an organization with a wallet of its own a derived deposit address, and credits nothing sent elsewhere', async () => {
    const own = '0x1234567890abcdef1234567890abcdef12345678';
    const org = await registerOrg(t, { name: 'Own Wallet', walletAddress: own });
    const fund = (await (
      await t.request('POST', '/api/v1/billing/fund', { key: org.apiKey, body: { method: 'apusd', amount: 20 } })
    ).json()) as Json;
    expect(fund.walletAddress).toMatch(/^0x[0-9a-f]{40}$/);
    expect(fund.walletAddress).not.toBe(own);
    const again = (await (
      await t.request('POST', '/api/v1/billing/fund', { key: org.apiKey, body: { method: 'apusd', amount: 5 } })
    ).json()) as Json;
    expect(again.walletAddress).toBe(fund.walletAddress);
    await chain.transfer(own, 7_000_000n);
    await chain.transfer(fund.walletAddress, 20_250_000n);
    await chain.mine(2);
    await scan();
    expect(await getJson(t, '/api/v1/billing/balance', org.apiKey)).toMatchObject({ apusdBalance: 20.25 });
  }, 60_000);

  it('credits a transfer once when two server processes read the chain at once', async () => {
    const org = await registerOrg(t, { name: 'Two Servers' });
    await chain.transfer(org.walletAddress, 4_000_000n);
    await chain.mine(2);
    const file = path.join(t.dir, 'two-servers.json');
    fs.writeFileSync(file, JSON.stringify({ config: t.ctx.config, now: t.clock.now() }));
    const server = () =>
      run(process.execPath, ['--import', 'tsx', 'test/helpers/billing-server.ts', file, 'deposits'], { cwd: ROOT });
    const passes = (await Promise.all([server(), server()])).map((r) =>
      JSON.parse(r.stdout.trim().split('\n').pop() as string),
    );
    expect(passes.reduce((n, p) => n + p.credited, 0)).toBe(1);
    expect((await t.ctx.repos.organizations.find(org.organizationId))?.apusdBalanceMicro).toBe(4_000_000);
    expect(await t.ctx.repos.ledger.sumOf(org.organizationId)).toBe(4_000_000);
  }, 60_000);

  it('reverses, by a ledger entry, a credited deposit that a reorg took off the chain', async () => {
    const org = await registerOrg(t, { name: 'Reorged' });
    const tx = await chain.transfer(org.walletAddress, 30_000_000n);
    const signed = await chain.raw(tx);
    await chain.mine(2);
    await scan();
    expect((await t.ctx.repos.organizations.find(org.organizationId))?.apusdBalanceMicro).toBe(30_000_000);
    // the block of the transfer and the two on it are replaced by empty ones
    await chain.reorg(3);
    await chain.mine(1);
    const pass = await scan();
    expect(pass.reversed).toBe(1);
    expect((await t.ctx.repos.organizations.find(org.organizationId))?.apusdBalanceMicro).toBe(0);
    const kinds = (await t.ctx.repos.ledger.list(org.organizationId, { limit: 10, offset: 0 })).map((e) => [
      e.kind,
      e.amountMicro,
    ]);
    expect(kinds.sort()).toEqual([
      ['deposit', 30_000_000],
      ['deposit_reversal', -30_000_000],
    ]);
    const [deposit] = await t.ctx.repos.deposits.list(org.organizationId, 10);
    expect(deposit?.status).toBe('reversed');
    expect((await scan()).reversed).toBe(0);
    // the same signed transaction mined again: the deposit is credited again, once
    await chain.sendRaw(signed);
    await chain.mine(2);
    expect((await scan()).credited).toBe(1);
    expect((await scan()).credited).toBe(0);
    expect((await t.ctx.repos.organizations.find(org.organizationId))?.apusdBalanceMicro).toBe(30_000_000);
    expect(await t.ctx.repos.ledger.sumOf(org.organizationId)).toBe(30_000_000);
    expect((await t.ctx.repos.deposits.list(org.organizationId, 10))[0]?.status).toBe('credited');
  }, 60_000);

  it('a reorg that takes back money already spent leaves the balance below zero, says so once, and refuses new sessions after the grace', async () => {
    const org = await registerOrg(t, { name: 'Spent It' });
    await t.request('POST', '/api/v1/billing/autopay', { key: org.apiKey, body: { enabled: true, method: 'apusd' } });
    await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'videos', interval: 'month' },
    });
    await chain.transfer(org.walletAddress, 99_000_000n);
    await chain.mine(2);
    await scan();
    toNextMonth(t, 2 * HOUR_MS);
    await closeDuePeriods(t.ctx);
    expect((await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices).toEqual([
      expect.objectContaining({ paymentStatus: 'paid' }),
    ]);
    await chain.reorg(3);
    await chain.mine(1);
    expect((await scan()).reversed).toBe(1);
    const row = await t.ctx.repos.organizations.find(org.organizationId);
    expect(row).toMatchObject({ apusdBalanceMicro: -99_000_000, negativeSince: t.clock.now() });
    const events = (await t.ctx.repos.webhookDeliveries.listForOrg(org.organizationId, 50)).filter(
      (d) => d.eventType === 'balance.negative',
    );
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]?.body as string).data).toMatchObject({
      balanceMicroApusd: -99_000_000,
      cause: 'deposit_reversal',
    });
    // within the 72-h grace the organization goes on; after it, what would spend more is 402
    const subscribe = () =>
      t.request('POST', '/api/v1/billing/subscriptions', {
        key: org.apiKey,
        body: { product: 'music', interval: 'month' },
      });
    expect((await subscribe()).status).toBe(201);
    t.clock.advance(72 * HOUR_MS);
    await expectError(await subscribe(), 402, 'INSUFFICIENT_BALANCE');
  }, 60_000);

  it('goes on from the stored cursor after a restart, without doubles or gaps', async () => {
    const org = await registerOrg(t, { name: 'Restart' });
    await chain.transfer(org.walletAddress, 1_000_000n);
    await chain.mine(2);
    await scan();
    const restarted = await createContext(t.ctx.config, { clock: t.clock, log: createLogger('silent') });
    try {
      await chain.transfer(org.walletAddress, 2_000_000n);
      await chain.mine(2);
      await scan(restarted);
      expect((await restarted.repos.organizations.find(org.organizationId))?.apusdBalanceMicro).toBe(3_000_000);
      expect(await restarted.repos.ledger.sumOf(org.organizationId)).toBe(3_000_000);
    } finally {
      await restarted.db.close();
    }
  }, 60_000);

  it('with --confirmations 3 credits a transfer when the deposits view would show 3 confirmations, not 2', async () => {
    const org = await registerOrg(t, { name: 'Three Confirmations' });
    const three = { ...(t.ctx.config.chain as NonNullable<typeof t.ctx.config.chain>), confirmations: 3 };
    const scan3 = () => scanDeposits(t.ctx, three, apusdReader(chain.rpcUrl, chain.token));
    await chain.transfer(org.walletAddress, 3_000_000n);
    // its own block and one on it: 2 confirmations as the view counts them (head − block + 1)
    await chain.mine(1);
    expect((await scan3()).credited).toBe(0);
    await chain.mine(1);
    expect((await scan3()).credited).toBe(1);
    const token = await adminToken(t);
    const view = await t.request('GET', `/api/v1/admin/billing/deposits?organizationId=${org.organizationId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await view.json()) as Json).deposits).toEqual([expect.objectContaining({ amount: 3, confirmations: 3 })]);
  }, 60_000);

  /** Asks for APUSD `amount` by POST /billing/fund; the fund request's id. */
  const fundRequest = async (apiKey: string, amount: number) => {
    const res = await t.request('POST', '/api/v1/billing/fund', { key: apiKey, body: { method: 'apusd', amount } });
    return ((await res.json()) as Json).transactionId as string;
  };

  it('a deposit is taken by the oldest pending fund request of its amount', async () => {
    const org = await registerOrg(t, { name: 'Two Requests' });
    const older = await fundRequest(org.apiKey, 10);
    t.clock.advance(HOUR_MS);
    const newer = await fundRequest(org.apiKey, 10);
    await chain.transfer(org.walletAddress, 10_000_000n);
    await chain.mine(2);
    await scan();
    const [deposit] = await t.ctx.repos.deposits.list(org.organizationId, 10);
    expect(await t.ctx.repos.deposits.findFundRequest(older)).toMatchObject({
      status: 'received',
      depositId: deposit?.id,
    });
    expect(await t.ctx.repos.deposits.findFundRequest(newer)).toMatchObject({ status: 'pending', depositId: null });
  }, 60_000);

  it('a fund request pending for more than 7 days has expired: a deposit of its amount is credited but does not take it', async () => {
    const org = await registerOrg(t, { name: 'Stale Request' });
    const stale = await fundRequest(org.apiKey, 8);
    t.clock.advance(FUND_REQUEST_TTL_MS + 24 * HOUR_MS);
    await chain.transfer(org.walletAddress, 8_000_000n);
    await chain.mine(2);
    expect((await scan()).credited).toBe(1);
    expect(await t.ctx.repos.deposits.findFundRequest(stale)).toMatchObject({ status: 'expired', depositId: null });
    expect((await t.ctx.repos.organizations.find(org.organizationId))?.apusdBalanceMicro).toBe(8_000_000);
  }, 60_000);
});
