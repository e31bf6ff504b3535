import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Chain, startChain } from '../helpers/chain.js';
import { drm, killAll, type ServeProcess, startServe } from '../helpers/serve-process.js';

// `drm serve --chain-rpc … --apusd-token … --confirmations 1` watches the chain itself: an
// organization asks where to send APUSD, a payer sends it, and the balance shows it once the
// transfer has its confirmation.

const T = 120_000;

describe('drm serve with a chain configured', () => {
  let dir: string;
  let chain: Chain;
  let server: ServeProcess;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-e2e-chain-'));
    chain = await startChain();
    server = await startServe({
      dataDir: dir,
      args: ['--chain-rpc', chain.rpcUrl, '--apusd-token', chain.token, '--confirmations', '1'],
      env: { DRM_CHAIN_POLL_SECONDS: '0.2', DRM_CHAIN_START_BLOCK: '0' },
    });
  }, T);
  afterAll(async () => {
    await server?.stop();
    await chain?.stop();
    killAll();
    fs.rmSync(dir, { recursive: true, force: true });
  }, T);

  it(
    'credits a transfer to the deposit address it gave, once confirmed',
    async () => {
      const call = (method: string, url: string, key?: string, body?: unknown) =>
        fetch(`${server.url}${url}`, {
          method,
          headers: { 'content-type': 'application/json', ...(key && { authorization: `Bearer ${key}` }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      const reg = (await (await call('POST', '/api/v1/auth/register', undefined, { name: 'Chain Co' })).json()) as {
        apiKey: string;
      };
      const fund = (await (
        await call('POST', '/api/v1/billing/fund', reg.apiKey, { method: 'apusd', amount: 25 })
      ).json()) as { walletAddress: string; status: string };
      expect(fund.status).toBe('pending');
      await chain.transfer(fund.walletAddress, 25_000_000n);
      await chain.mine(1);
      let balance = 0;
      for (let i = 0; i < 100 && balance !== 25; i++) {
        await new Promise((r) => setTimeout(r, 200));
        balance = (
          (await (await call('GET', '/api/v1/billing/balance', reg.apiKey)).json()) as { apusdBalance: number }
        ).apusdBalance;
      }
      expect(balance).toBe(25);
      // the operator's view, from another process on the same data directory
      const listed = JSON.parse(
        await drm([
          'admin',
          'billing',
          'deposits',
          '--data-dir',
          dir,
          '--chain-rpc',
          chain.rpcUrl,
          '--apusd-token',
          chain.token,
          '--json',
        ]),
      ) as { deposits: { amount: number; status: string; confirmations: number }[] };
      expect(listed.deposits).toEqual([expect.objectContaining({ amount: 25, status: 'credited' })]);
      expect(listed.deposits[0]?.confirmations).toBeGreaterThanOrEqual(2);
      const table = await drm([
        'admin',
        'billing',
        'deposits',
        '--data-dir',
        dir,
        '--chain-rpc',
        chain.rpcUrl,
        '--apusd-token',
        chain.token,
      ]);
      expect(table).toMatch(/25\.00.*credited/);
    },
    T,
  );
});
