import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/clock.js';
import { NONCE_TTL_MS } from '../../src/domain/admin/sign-in.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';

// The open endpoints (registration, sign-in nonces) are limited per client address, counted in
// the database like the keyed limits. The server sits behind a proxy here (--trust-proxy), so
// each request names its client in X-Forwarded-For.

describe.each(DIALECTS)('limits on the open endpoints on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect, { config: { trustProxy: true, registerLimitPerHour: 3, nonceLimitPerHour: 2, maxOutstandingNonces: 4 } });
  });
  afterAll(() => t.close());

  const nextHour = () => t.clock.set((Math.floor(t.clock.now() / HOUR_MS) + 1) * HOUR_MS + 60_000);
  const hourEnd = () => (Math.floor(t.clock.now() / HOUR_MS) + 1) * (HOUR_MS / 1000);
  const from = (ip: string) => ({ 'x-forwarded-for': `${ip}, 10.0.0.1` });
  const register = (ip: string, name = 'Flood Co') => t.request('POST', '/api/v1/auth/register', { body: { name }, headers: from(ip) });
  const nonce = (ip: string) => t.request('GET', '/api/v1/admin/auth/nonce', { headers: from(ip) });
  const organizations = async () => (await t.ctx.repos.organizations.listWithStats({ monthStart: 0, limit: 500, offset: 0 })).length;

  it('one address registers at most --register-limit organizations an hour; the next gets 429 with Retry-After and creates nothing', async () => {
    nextHour();
    for (const remaining of [2, 1, 0]) {
      const res = await register('203.0.113.5');
      expect(res.status).toBe(201);
      expect(res.headers.get('x-ratelimit-limit')).toBe('3');
      expect(res.headers.get('x-ratelimit-remaining')).toBe(String(remaining));
      expect(res.headers.get('x-ratelimit-reset')).toBe(String(hourEnd()));
    }
    const before = await organizations();
    const refused = await register('203.0.113.5', 'One Too Many');
    expect(refused.status).toBe(429);
    expect(await refused.json()).toEqual({ error: expect.stringContaining('registrations from one address'), code: 'RATE_LIMIT_EXCEEDED', status: 429 });
    expect(Number(refused.headers.get('retry-after'))).toBe(hourEnd() - Math.floor(t.clock.now() / 1000));
    expect(await organizations()).toBe(before);
    // A bad body counts too: the limit is on asking, not on succeeding.
    expect((await t.request('POST', '/api/v1/auth/register', { body: '{', headers: from('203.0.113.5') })).status).toBe(429);
  });

  it('another address still registers, and the next clock hour lets the first one in again', async () => {
    expect((await register('203.0.113.6')).status).toBe(201);
    nextHour();
    expect((await register('203.0.113.5')).status).toBe(201);
  });

  it('one address gets at most --nonce-limit sign-in nonces an hour', async () => {
    nextHour();
    expect((await nonce('198.51.100.7')).status).toBe(200);
    expect((await nonce('198.51.100.7')).status).toBe(200);
    const refused = await nonce('198.51.100.7');
    expect(refused.status).toBe(429);
    expect((await refused.json()).code).toBe('RATE_LIMIT_EXCEEDED');
    expect(refused.headers.get('retry-after')).toEqual(expect.stringMatching(/^\d+$/));
  });

  it('outstanding nonces are bounded: past the bound nothing is stored; once they expire, nonces are issued again', async () => {
    const outstanding = () => t.ctx.repos.admins.countOutstandingNonces(t.clock.now());
    // 2 are left from the test before (unexpired, unused); the bound is 4.
    expect(await outstanding()).toBe(2);
    expect((await nonce('192.0.2.1')).status).toBe(200);
    expect((await nonce('192.0.2.2')).status).toBe(200);
    const refused = await nonce('192.0.2.3');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('60');
    expect(await outstanding()).toBe(4);
    t.clock.advance(NONCE_TTL_MS);
    expect((await nonce('192.0.2.3')).status).toBe(200);
    expect(await outstanding()).toBe(1);
  });
});
