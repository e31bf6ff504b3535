import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOUR_MS } from '../../src/clock.js';
import { generateApiKey, hashApiKey, newId } from '../../src/crypto/tokens.js';
import { setRateLimit, suspendOrganization } from '../../src/domain/admin/organizations.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { registerOrg } from '../helpers/fixtures.js';

const VERIFY = '/api/v1/auth/verify';

/** The rate-limit headers of a response, as numbers (NaN when absent). */
function rateHeaders(res: Response) {
  return {
    limit: Number(res.headers.get('X-RateLimit-Limit') ?? Number.NaN),
    remaining: Number(res.headers.get('X-RateLimit-Remaining') ?? Number.NaN),
    reset: Number(res.headers.get('X-RateLimit-Reset') ?? Number.NaN),
  };
}

describe.each(DIALECTS)('rate limits on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
  });
  afterAll(() => t.close());

  /** Epoch seconds at which the current clock hour ends. */
  const hourEnd = () => ((Math.floor(t.clock.now() / HOUR_MS) + 1) * HOUR_MS) / 1000;

  /** Moves the clock to the start of the next clock hour plus `ms`, so a test has a whole window. */
  const nextHour = (ms = 0) => t.clock.set((Math.floor(t.clock.now() / HOUR_MS) + 1) * HOUR_MS + ms);

  /** An organization with an hourly limit set through the core (as an admin would). */
  async function orgWithLimit(perHour: number) {
    const reg = await registerOrg(t);
    await setRateLimit(t.ctx, reg.organizationId, { rateLimitPerHour: perHour });
    return reg;
  }

  /** A second live key of the organization (key management has no endpoint yet, so straight into the table). */
  async function addKey(organizationId: string, scopes = ['catalog', 'stream', 'billing', 'forensics']) {
    const apiKey = generateApiKey();
    const id = newId();
    await t.ctx.repos.apiKeys.insert({
      id,
      organizationId,
      name: 'second',
      prefix: apiKey.slice(0, 12),
      keyHash: hashApiKey(apiKey),
      scopes,
      rateLimitPerHour: null,
      revokedAt: null,
      createdAt: t.clock.now(),
    });
    return { id, apiKey };
  }

  async function keyIdOf(apiKey: string): Promise<string> {
    const found = await t.ctx.repos.apiKeys.findByHash(hashApiKey(apiKey));
    if (!found) throw new Error('key not found');
    return found.key.id;
  }

  async function expectLimited(res: Response, limit: number) {
    expect(res.status).toBe(429);
    expect(await res.json()).toEqual({ error: expect.any(String), code: 'RATE_LIMIT_EXCEEDED', status: 429 });
    expect(rateHeaders(res)).toEqual({ limit, remaining: 0, reset: hourEnd() });
    expect(res.headers.get('Retry-After')).toBe(String(Math.ceil(hourEnd() - t.clock.now() / 1000)));
  }

  it('every keyed response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset at the end of the clock hour', async () => {
    nextHour(10 * 60_000);
    const reg = await registerOrg(t);
    const first = await t.request('GET', VERIFY, { key: reg.apiKey });
    expect(first.status).toBe(200);
    expect(rateHeaders(first)).toEqual({ limit: 1000, remaining: 999, reset: hourEnd() });
    expect((await first.json()).rateLimits).toMatchObject({ perHour: 1000, remaining: 999 });

    t.clock.advance(20 * 60_000);
    const catalog = await t.request('GET', '/api/v1/catalog', { key: reg.apiKey });
    expect(catalog.status).toBe(200);
    expect(rateHeaders(catalog)).toEqual({ limit: 1000, remaining: 998, reset: hourEnd() });
    const deliveries = await t.request('GET', '/api/v1/webhook/deliveries', { key: reg.apiKey });
    expect(deliveries.status).toBe(200);
    expect(rateHeaders(deliveries)).toEqual({ limit: 1000, remaining: 997, reset: hourEnd() });
  });

  it('X-RateLimit-Reset is epoch seconds of the end of the current clock hour', async () => {
    t.clock.set(Date.UTC(2026, 2, 1, 9, 59, 59, 500));
    const reg = await registerOrg(t);
    const res = await t.request('GET', VERIFY, { key: reg.apiKey });
    expect(rateHeaders(res).reset).toBe(Date.UTC(2026, 2, 1, 10, 0, 0) / 1000);
    t.clock.set(Date.UTC(2026, 2, 1, 10, 0, 0));
    const next = await t.request('GET', VERIFY, { key: reg.apiKey });
    expect(rateHeaders(next).reset).toBe(Date.UTC(2026, 2, 1, 11, 0, 0) / 1000);
  });

  it('error responses to a keyed request carry the rate-limit headers too', async () => {
    nextHour();
    const streamOnly = await registerOrg(t, { scopes: ['stream'] });
    const scope = await t.request('GET', '/api/v1/catalog', { key: streamOnly.apiKey });
    expect(scope.status).toBe(403);
    expect((await scope.json()).code).toBe('INSUFFICIENT_SCOPE');
    expect(rateHeaders(scope)).toEqual({ limit: 1000, remaining: 999, reset: hourEnd() });

    const reg = await registerOrg(t);
    const cases: Array<[string, string, number]> = [
      ['GET', '/api/v1/catalog/00000000-0000-4000-8000-000000000000', 404],
      ['GET', '/api/v1/catalog?limit=0', 400],
      ['PUT', '/api/v1/webhook', 400],
      ['POST', '/api/v1/webhook/test', 400],
    ];
    let remaining = 999;
    for (const [method, url, status] of cases) {
      const res = await t.request(method, url, { key: reg.apiKey, body: method === 'GET' ? undefined : {} });
      expect(res.status, `${method} ${url}`).toBe(status);
      expect(rateHeaders(res), `${method} ${url}`).toEqual({ limit: 1000, remaining: remaining--, reset: hourEnd() });
    }
  });

  it("a suspended organization's refusals carry the rate-limit headers and count in its window", async () => {
    nextHour();
    const reg = await registerOrg(t);
    await suspendOrganization(t.ctx, reg.organizationId, { reason: 'unpaid invoices' });
    for (const remaining of [999, 998]) {
      const res = await t.request('GET', '/api/v1/catalog', { key: reg.apiKey });
      expect(res.status).toBe(403);
      expect((await res.json()).code).toBe('ORGANIZATION_SUSPENDED');
      expect(rateHeaders(res)).toEqual({ limit: 1000, remaining, reset: hourEnd() });
    }
  });

  it('after the limit a request gets 429 RATE_LIMIT_EXCEEDED with X-RateLimit-Reset and Retry-After', async () => {
    nextHour(15 * 60_000);
    const reg = await orgWithLimit(3);
    for (const remaining of [2, 1, 0]) {
      const res = await t.request('GET', VERIFY, { key: reg.apiKey });
      expect(res.status).toBe(200);
      expect(rateHeaders(res)).toEqual({ limit: 3, remaining, reset: hourEnd() });
    }
    const refused = await t.request('GET', VERIFY, { key: reg.apiKey });
    await expectLimited(refused, 3);
    expect(refused.headers.get('Retry-After')).toBe(String(45 * 60));

    // Every endpoint of the key is refused, and the wait shrinks as the hour runs out.
    t.clock.advance(30 * 60_000);
    const catalog = await t.request('GET', '/api/v1/catalog', { key: reg.apiKey });
    await expectLimited(catalog, 3);
    expect(catalog.headers.get('Retry-After')).toBe(String(15 * 60));
  });

  it('the next clock hour resets the window', async () => {
    nextHour(59 * 60_000);
    const reg = await orgWithLimit(3);
    for (let i = 0; i < 3; i++) expect((await t.request('GET', VERIFY, { key: reg.apiKey })).status).toBe(200);
    await expectLimited(await t.request('GET', VERIFY, { key: reg.apiKey }), 3);

    t.clock.advance(59_999);
    await expectLimited(await t.request('GET', VERIFY, { key: reg.apiKey }), 3);

    t.clock.advance(1);
    const fresh = await t.request('GET', VERIFY, { key: reg.apiKey });
    expect(fresh.status).toBe(200);
    expect(rateHeaders(fresh)).toEqual({ limit: 3, remaining: 2, reset: hourEnd() });
    expect(hourEnd() * 1000).toBe(t.clock.now() + HOUR_MS);
  });

  it("one organization's limit does not touch another's", async () => {
    nextHour();
    const tight = await orgWithLimit(1);
    const other = await registerOrg(t);
    expect((await t.request('GET', VERIFY, { key: tight.apiKey })).status).toBe(200);
    await expectLimited(await t.request('GET', VERIFY, { key: tight.apiKey }), 1);
    const res = await t.request('GET', VERIFY, { key: other.apiKey });
    expect(res.status).toBe(200);
    expect(rateHeaders(res)).toEqual({ limit: 1000, remaining: 999, reset: hourEnd() });
  });

  it('a per-key limit is enforced on that key only while the organization limit still applies to all keys', async () => {
    nextHour();
    const reg = await orgWithLimit(5);
    const a = { id: await keyIdOf(reg.apiKey), apiKey: reg.apiKey };
    const b = await addKey(reg.organizationId);
    await setRateLimit(t.ctx, reg.organizationId, { rateLimitPerHour: 2, keyId: a.id });

    // Key A: its own limit of 2 is the tighter one.
    for (const remaining of [1, 0]) {
      const res = await t.request('GET', VERIFY, { key: a.apiKey });
      expect(res.status).toBe(200);
      expect(rateHeaders(res)).toEqual({ limit: 2, remaining, reset: hourEnd() });
    }
    await expectLimited(await t.request('GET', VERIFY, { key: a.apiKey }), 2);

    // Key B has no limit of its own: the organization's 5 applies, 2 of them spent by A.
    for (const remaining of [2, 1, 0]) {
      const res = await t.request('GET', VERIFY, { key: b.apiKey });
      expect(res.status).toBe(200);
      expect(rateHeaders(res)).toEqual({ limit: 5, remaining, reset: hourEnd() });
    }
    await expectLimited(await t.request('GET', VERIFY, { key: b.apiKey }), 5);
    await expectLimited(await t.request('GET', VERIFY, { key: a.apiKey }), 2);
  });

  it("a key refused by its own limit does not spend the organization's budget of the other keys", async () => {
    nextHour();
    const reg = await orgWithLimit(3);
    const a = { id: await keyIdOf(reg.apiKey), apiKey: reg.apiKey };
    const b = await addKey(reg.organizationId);
    await setRateLimit(t.ctx, reg.organizationId, { rateLimitPerHour: 1, keyId: a.id });

    expect((await t.request('GET', VERIFY, { key: a.apiKey })).status).toBe(200);
    for (let i = 0; i < 5; i++) await expectLimited(await t.request('GET', VERIFY, { key: a.apiKey }), 1);

    for (const remaining of [1, 0]) {
      const res = await t.request('GET', VERIFY, { key: b.apiKey });
      expect(res.status).toBe(200);
      expect(rateHeaders(res)).toEqual({ limit: 3, remaining, reset: hourEnd() });
    }
    await expectLimited(await t.request('GET', VERIFY, { key: b.apiKey }), 3);
  });

  it('the headers report the tighter of the key and organization limits', async () => {
    nextHour();
    // A key limit above the organization's: the organization's is the tighter one.
    const loose = await orgWithLimit(3);
    await setRateLimit(t.ctx, loose.organizationId, { rateLimitPerHour: 10, keyId: await keyIdOf(loose.apiKey) });
    const res = await t.request('GET', VERIFY, { key: loose.apiKey });
    expect(rateHeaders(res)).toEqual({ limit: 3, remaining: 2, reset: hourEnd() });

    // A key limit below the organization's: the key's is the tighter one.
    const tight = await orgWithLimit(10);
    await setRateLimit(t.ctx, tight.organizationId, { rateLimitPerHour: 2, keyId: await keyIdOf(tight.apiKey) });
    const res2 = await t.request('GET', VERIFY, { key: tight.apiKey });
    expect(rateHeaders(res2)).toEqual({ limit: 2, remaining: 1, reset: hourEnd() });

    // The key's own limit is higher, but other keys have used up most of the organization's:
    // what is left to this key is the organization's remainder.
    const shared = await orgWithLimit(4);
    const a = { id: await keyIdOf(shared.apiKey), apiKey: shared.apiKey };
    const b = await addKey(shared.organizationId);
    await setRateLimit(t.ctx, shared.organizationId, { rateLimitPerHour: 3, keyId: a.id });
    for (let i = 0; i < 3; i++) expect((await t.request('GET', VERIFY, { key: b.apiKey })).status).toBe(200);
    const last = await t.request('GET', VERIFY, { key: a.apiKey });
    expect(last.status).toBe(200);
    expect(rateHeaders(last)).toEqual({ limit: 4, remaining: 0, reset: hourEnd() });
    await expectLimited(await t.request('GET', VERIFY, { key: a.apiKey }), 4);
  });

  it('lowering a limit inside the window takes effect on the next request', async () => {
    nextHour();
    const reg = await orgWithLimit(10);
    for (let i = 0; i < 3; i++) expect((await t.request('GET', VERIFY, { key: reg.apiKey })).status).toBe(200);
    await setRateLimit(t.ctx, reg.organizationId, { rateLimitPerHour: 3 });
    await expectLimited(await t.request('GET', VERIFY, { key: reg.apiKey }), 3);
    await setRateLimit(t.ctx, reg.organizationId, { rateLimitPerHour: 6 });
    const res = await t.request('GET', VERIFY, { key: reg.apiKey });
    expect(res.status).toBe(200);
    expect(rateHeaders(res).limit).toBe(6);
  });

  it('requests without a valid key are not counted and carry no rate-limit headers', async () => {
    nextHour();
    const reg = await orgWithLimit(2);
    const anonymous = await t.request('GET', VERIFY);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('X-RateLimit-Limit')).toBeNull();
    const plans = await t.request('GET', '/api/v1/billing/plans');
    expect(plans.status).toBe(200);
    expect(plans.headers.get('X-RateLimit-Limit')).toBeNull();
    const res = await t.request('GET', VERIFY, { key: reg.apiKey });
    expect(rateHeaders(res)).toEqual({ limit: 2, remaining: 1, reset: hourEnd() });
  });
});
