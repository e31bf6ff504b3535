import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookFetch, guardedLookup, type ResolveAll } from '../../src/domain/webhooks/guarded-fetch.js';
import { DIALECTS, makeTestApp } from '../helpers/context.js';
import { registerOrg } from '../helpers/fixtures.js';

// DNS rebinding: a webhook name that resolves to a public address when the URL is checked and to
// 127.0.0.1 when the delivery connects. The address connected to must be the one checked, so the
// delivery's own lookup (a custom resolver here, standing in for DNS) decides.

/** Resolves rebind.example to the loopback address, public.example to a public one. */
const rebinding: ResolveAll = (hostname, _options, callback) => {
  if (hostname === 'rebind.example') return callback(null, [{ address: '127.0.0.1', family: 4 }]);
  if (hostname === 'mapped.example') return callback(null, [{ address: '::ffff:10.0.0.7', family: 6 }]);
  if (hostname === 'public.example') return callback(null, [{ address: '93.184.216.34', family: 4 }]);
  callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
};

let hits = 0;
const receiver = http.createServer((_req, res) => {
  hits++;
  res.end('ok');
});
let port: number;
beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  port = (receiver.address() as AddressInfo).port;
});
afterAll(() => {
  receiver.closeAllConnections();
  receiver.close();
});

const lookupOf = (allowPrivate: boolean, hostname: string) =>
  new Promise<{ err: Error | null; address: string }>((resolve) =>
    guardedLookup(allowPrivate, rebinding)(hostname, {}, (err, address) => resolve({ err, address: String(address) })),
  );

describe('webhook connections', () => {
  it('the lookup they connect through passes a public address and refuses loopback and private ones, IPv4-mapped included', async () => {
    expect(await lookupOf(false, 'public.example')).toEqual({ err: null, address: '93.184.216.34' });
    expect((await lookupOf(false, 'rebind.example')).err?.message).toMatch(
      /rebind\.example resolves to 127\.0\.0\.1, a loopback or private address/,
    );
    expect((await lookupOf(false, 'mapped.example')).err?.message).toMatch(/::ffff:10\.0\.0\.7/);
    expect(await lookupOf(true, 'rebind.example')).toEqual({ err: null, address: '127.0.0.1' });
    expect((await lookupOf(false, 'nowhere.example')).err?.message).toMatch(/ENOTFOUND/);
  });

  it('a fetch to a name that resolves to 127.0.0.1 at connect time never reaches the receiver', async () => {
    const before = hits;
    const guarded = createWebhookFetch(false, rebinding);
    const failure = await guarded(`http://rebind.example:${port}/hook`, { method: 'POST', body: '{}' }).catch(
      (err: Error) => err,
    );
    expect(failure).toBeInstanceOf(Error);
    expect(String((failure as Error).cause)).toMatch(/loopback or private address/);
    expect(hits).toBe(before);
    // The same request with private targets allowed does arrive: the refusal was the lookup's.
    const allowed = await createWebhookFetch(true, rebinding)(`http://rebind.example:${port}/hook`, {
      method: 'POST',
      body: '{}',
    });
    expect(allowed.status).toBe(200);
    expect(hits).toBe(before + 1);
  });
});

describe.each(DIALECTS)('webhook delivery through a rebinding name on %s', (dialect) => {
  it('the URL passes the check when set, the delivery is refused at connect time, recorded with why, and the receiver is never hit', async () => {
    const t = await makeTestApp(dialect, { fetch: createWebhookFetch(false, rebinding) });
    try {
      const reg = await registerOrg(t);
      // Ordinary DNS cannot resolve the name now, so the check when it is set lets it through.
      const put = await t.request('PUT', '/api/v1/webhook', {
        key: reg.apiKey,
        body: { webhookUrl: `http://rebind.example:${port}/hook` },
      });
      expect(put.status).toBe(200);
      const before = hits;
      const sent = await t.request('POST', '/api/v1/webhook/test', { key: reg.apiKey });
      expect(await sent.json()).toEqual({ success: false, responseCode: 0 });
      expect(hits).toBe(before);
      const listed = await t.request('GET', '/api/v1/webhook/deliveries', { key: reg.apiKey });
      const [delivery] = ((await listed.json()) as { deliveries: Array<Record<string, unknown>> }).deliveries;
      expect(delivery).toMatchObject({
        status: 'failed',
        responseCode: 0,
        lastError: expect.stringMatching(/rebind\.example resolves to 127\.0\.0\.1/),
      });
    } finally {
      await t.close();
    }
  });
});
