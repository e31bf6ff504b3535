import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/crypto/tokens.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { registerOrg } from '../helpers/fixtures.js';

describe.each(DIALECTS)('auth on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
  });
  afterAll(() => t.close());

  it('registers an organization with a key shown once, a wallet, an id, a webhook secret and all four scopes', async () => {
    const reg = await registerOrg(t);
    expect(reg.apiKey).toMatch(/^drm_live_[0-9A-Za-z]{32,}$/);
    expect(reg.walletAddress).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(reg.webhookSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(reg.scopes).toEqual(['catalog', 'stream', 'billing', 'forensics']);
    const found = await t.ctx.repos.apiKeys.findByHash(hashApiKey(reg.apiKey));
    expect(found?.key.keyHash).toBe(hashApiKey(reg.apiKey));
    expect(JSON.stringify(found)).not.toContain(reg.apiKey);
    expect(JSON.stringify(found)).not.toContain(reg.webhookSecret);
  });

  it('keeps a supplied wallet address and grants only the scopes asked for', async () => {
    const walletAddress = '0x1111111111111111111111111111111111111111';
    const reg = await registerOrg(t, { walletAddress, scopes: ['catalog'] });
    expect(reg.walletAddress).toBe(walletAddress);
    expect(reg.scopes).toEqual(['catalog']);
  });

  it('verify describes the organization, plan, scopes and rate limits', async () => {
    const reg = await registerOrg(t);
    const res = await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.organization).toMatchObject({ id: reg.organizationId, name: 'Acme Films', isActive: true });
    expect(body.plan).toMatchObject({ name: 'Paid', basePriceApusd: 99, watermarkingIncluded: true });
    expect(body.rateLimits).toMatchObject({ perHour: 1000, remaining: 999 });
    expect(res.headers.get('X-RateLimit-Limit')).toBe('1000');
  });

  it('rotation revokes the old key at once and refuses a second rotation within the hour', async () => {
    const reg = await registerOrg(t);
    const rotated = await t.request('POST', '/api/v1/auth/rotate', { key: reg.apiKey });
    expect(rotated.status).toBe(200);
    const { apiKey, oldKeyRevoked } = await rotated.json();
    expect(oldKeyRevoked).toBe(true);
    expect((await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey })).status).toBe(401);
    expect((await t.request('GET', '/api/v1/auth/verify', { key: apiKey })).status).toBe(200);

    t.clock.advance(59 * 60_000);
    const again = await t.request('POST', '/api/v1/auth/rotate', { key: apiKey });
    expect(again.status).toBe(429);
    expect((await again.json()).code).toBe('ROTATION_COOLDOWN');
    expect(Number(again.headers.get('Retry-After'))).toBeGreaterThan(0);

    t.clock.advance(60_000);
    expect((await t.request('POST', '/api/v1/auth/rotate', { key: apiKey })).status).toBe(200);
  });

  it('refuses a missing, malformed or unknown key with INVALID_API_KEY', async () => {
    for (const key of [undefined, 'nonsense', `drm_live_${'x'.repeat(40)}`]) {
      const res = await t.request('GET', '/api/v1/auth/verify', { key });
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: expect.any(String), code: 'INVALID_API_KEY', status: 401 });
    }
  });
});
