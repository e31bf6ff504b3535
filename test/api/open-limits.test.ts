import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/clock.js';
import { resolveConfig } from '../../src/config.js';
import { NONCE_TTL_MS } from '../../src/domain/admin/sign-in.js';
import { clientBucket } from '../../src/domain/open-limits.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';

// The open endpoints (registration, sign-in nonces) are limited per client address, counted in
// the database like the keyed limits. The server sits behind a proxy here (--trust-proxy), so
// each request names its client in X-Forwarded-For.

describe('the defaults', () => {
  it('are 20 registrations and 60 nonces per address an hour, and 10,000 outstanding nonces', () => {
    const config = resolveConfig({}, {});
    expect([config.registerLimitPerHour, config.nonceLimitPerHour, config.maxOutstandingNonces]).toEqual([
      20, 60, 10_000,
    ]);
  });
});

describe('whose budget an address spends', () => {
  it('IPv4 per address, also IPv4-mapped; IPv6 per /64 however it is written; anything else as its text', () => {
    expect(clientBucket('203.0.113.5')).toBe('203.0.113.5');
    expect(clientBucket('::ffff:203.0.113.5')).toBe('203.0.113.5');
    expect(clientBucket('2001:db8:0:1::1')).toBe('2001:db8:0:1::/64');
    expect(clientBucket('2001:0DB8:0000:0001:ffff:ffff:ffff:ffff')).toBe('2001:db8:0:1::/64');
    expect(clientBucket('2001:db8::1:0:0:1')).toBe('2001:db8:0:0::/64');
    expect(clientBucket('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(clientBucket('64:ff9b:1:2:3::192.0.2.1')).toBe('64:ff9b:1:2::/64');
    expect(clientBucket('2001:db8:0:2::1')).not.toBe(clientBucket('2001:db8:0:1::1'));
    expect(clientBucket(`not-an-address-${'x'.repeat(100)}`)).toHaveLength(64);
  });
});

describe.each(DIALECTS)('limits on the open endpoints on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    // The registration limit is the default (20); the nonce limits are made small.
    t = await makeTestApp(dialect, { config: { trustProxy: true, nonceLimitPerHour: 2, maxOutstandingNonces: 4 } });
  });
  afterAll(() => t.close());

  const nextHour = () => t.clock.set((Math.floor(t.clock.now() / HOUR_MS) + 1) * HOUR_MS + 60_000);
  const hourEnd = () => (Math.floor(t.clock.now() / HOUR_MS) + 1) * (HOUR_MS / 1000);
  const from = (ip: string) => ({ 'x-forwarded-for': `${ip}, 10.0.0.1` });
  const register = (ip: string, name = 'Flood Co') =>
    t.request('POST', '/api/v1/auth/register', { body: { name }, headers: from(ip) });
  const nonce = (ip: string) => t.request('GET', '/api/v1/admin/auth/nonce', { headers: from(ip) });
  const organizations = async () =>
    (await t.ctx.repos.organizations.listWithStats({ monthStart: 0, limit: 500, offset: 0 })).length;

  it('one address registers 20 organizations an hour; the 21st gets 429 with Retry-After and creates nothing', async () => {
    nextHour();
    for (let remaining = 19; remaining >= 0; remaining--) {
      const res = await register('203.0.113.5');
      expect(res.status).toBe(201);
      expect(res.headers.get('x-ratelimit-limit')).toBe('20');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
      expect(res.headers.get('x-ratelimit-reset')).toBe(String(hourEnd()));
    }
    const before = await organizations();
    const refused = await register('203.0.113.5', 'One Too Many');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({
      error: expect.stringContaining('registrations from one address'),
      code: 'RATE_LIMIT_EXCEEDED',
      status: 429,
    });
    expect(Number(refused.headers.get('retry-after'))).toBe(hourEnd() - Math.floor(t.clock.now() / 1000));
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    expect(await organizations()).toBe(before);
    // A bad body counts too: the limit is on asking, not on succeeding.
    expect((await t.request('POST', '/api/v1/auth/register', { body: '{', headers: from('203.0.113.5') })).status).toBe(
      429,
    );
  });

  it('another address still registers, and the next clock hour lets the first one in again', async () => {
    expect((await register('203.0.113.6')).status).toBe(201);
    nextHour();
    expect((await register('203.0.113.5')).status).toBe(201);
  });

  it('IPv6 clients are counted per /64: rotating the host part does not buy more', async () => {
    nextHour();
    for (let host = 1; host <= 20; host++)
      expect((await register(`2001:db8:0:7::${host.toString(16)}`)).status).toBe(201);
    expect((await register('2001:db8:0:7:ffff::1')).status).toBe(429);
    expect((await register('2001:db8:0:8::1')).status).toBe(201);
  });

  it('one address gets at most --nonce-limit sign-in nonces an hour, and more in the next hour', async () => {
    nextHour();
    expect((await nonce('198.51.100.7')).status).toBe(200);
    expect((await nonce('198.51.100.7')).status).toBe(200);
    const refused = await nonce('198.51.100.7');
    expect(refused.status).toBe(429);
    expect((await refused.json()).code).toBe('RATE_LIMIT_EXCEEDED');
    expect(Number(refused.headers.get('retry-after'))).toBe(hourEnd() - Math.floor(t.clock.now() / 1000));
    expect(refused.headers.get('x-ratelimit-limit')).toBe('2');
    expect((await nonce('198.51.100.8')).status).toBe(200);
    t.clock.advance(NONCE_TTL_MS); // the nonces handed out so far expire, out of the way of the next test
    nextHour();
    expect((await nonce('198.51.100.7')).status).toBe(200);
  });

  it('outstanding nonces are bounded: past the bound nothing is stored; once they expire, nonces are issued again', async () => {
    const outstanding = () => t.ctx.repos.admins.countOutstandingNonces(t.clock.now());
    // 1 is left from the test before (unexpired, unused); the bound is 4.
    expect(await outstanding()).toBe(1);
    for (const ip of ['192.0.2.1', '192.0.2.2', '192.0.2.3']) expect((await nonce(ip)).status).toBe(200);
    const refused = await nonce('192.0.2.4');
    expect(refused.status).toBe(429);
    expect((await refused.json()).code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(refused.headers.get('x-ratelimit-remaining')).toBe('1'); // this address's own budget, not the bound
    expect(await outstanding()).toBe(4);
    t.clock.advance(NONCE_TTL_MS);
    expect((await nonce('192.0.2.4')).status).toBe(200);
    expect(await outstanding()).toBe(1);
  });

  it('the bound holds when the requests come at once', async () => {
    t.clock.advance(NONCE_TTL_MS);
    const answers = await Promise.all(
      ['192.0.2.11', '192.0.2.12', '192.0.2.13', '192.0.2.14', '192.0.2.15', '192.0.2.16'].map(nonce),
    );
    expect(answers.map((r) => r.status).sort()).toEqual([200, 200, 200, 200, 429, 429]);
    expect(await t.ctx.repos.admins.countOutstandingNonces(t.clock.now())).toBe(4);
  });
});

describe.each(DIALECTS)('over a real socket, without --trust-proxy, on %s', (dialect) => {
  let t: TestApp;
  let server: ReturnType<typeof serve>;
  let url: string;
  beforeAll(async () => {
    t = await makeTestApp(dialect, { config: { nonceLimitPerHour: 2 } });
    server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise((resolve) => server.once('listening', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await t.close();
  });

  it('the socket address is counted, and a forged X-Forwarded-For buys nothing', async () => {
    const nonce = (forged: string) =>
      fetch(`${url}/api/v1/admin/auth/nonce`, { headers: { 'x-forwarded-for': forged } });
    expect((await nonce('198.51.100.1')).status).toBe(200);
    expect((await nonce('198.51.100.2')).status).toBe(200);
    const refused = await nonce('198.51.100.3');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toEqual(expect.stringMatching(/^\d+$/));
  });
});
