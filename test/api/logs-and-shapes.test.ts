import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import { createLogger } from '../../src/log.js';
import { toMicro } from '../../src/domain/money.js';
import { makeTestApp, type TestApp } from '../helpers/context.js';
import { registerOrg } from '../helpers/fixtures.js';

describe('secrets stay out of the logs', () => {
  let t: TestApp;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await makeTestApp('sqlite', { config: { allowPrivateWebhooks: true } });
    t.ctx.log = createLogger('debug', (line) => lines.push(line));
    t.app = createApp(t.ctx);
  });
  afterAll(() => t.close());

  it('logs requests at debug level without keys, webhook secrets or query strings', async () => {
    const send = (method: string, url: string, init: { key?: string; body?: unknown } = {}) =>
      t.app.request(url, {
        method,
        headers: { 'content-type': 'application/json', ...(init.key && { authorization: `Bearer ${init.key}` }) },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
      });
    const reg = await (await send('POST', '/api/v1/auth/register', { body: { name: 'Quiet Co' } })).json();
    await send('GET', '/api/v1/auth/verify?session=capability-123', { key: reg.apiKey });
    const put = await (
      await send('PUT', '/api/v1/webhook', { key: reg.apiKey, body: { regenerateSecret: true } })
    ).json();
    const rotated = await (await send('POST', '/api/v1/auth/rotate', { key: reg.apiKey })).json();
    await send('GET', '/api/v1/auth/verify', { key: 'drm_live_not-a-real-key-but-long-enough-to-look-like-one' });

    const log = lines.join('');
    expect(lines.length).toBeGreaterThanOrEqual(5);
    for (const secret of [
      reg.apiKey,
      reg.webhookSecret,
      put.webhookSecret,
      rotated.apiKey,
      'capability-123',
      'not-a-real-key',
    ]) {
      expect(log).not.toContain(secret);
    }
    expect(log).toContain('/api/v1/auth/verify');
  });
});

describe.each(['a', 'b'] as const)('api shape %s', (shape) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp('sqlite', { config: { apiShape: shape } });
  });
  afterAll(() => t.close());

  it("registers on the Paid plan under the shape's own name", async () => {
    const reg = await registerOrg(t);
    const body = await (await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey })).json();
    expect(body.organization.plan).toBe(shape === 'a' ? 'paid' : 'professional');
    expect(body.plan.name).toBe('Paid');
  });

  it('reports balances as whole APUSD in shape a and as decimals in shape b', async () => {
    const reg = await registerOrg(t);
    await t.ctx.repos.organizations.update(reg.organizationId, { apusdBalanceMicro: toMicro(12.75) });
    const body = await (await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey })).json();
    // whole APUSD in Shape A, rounded half up at the edge (README, "Billing")
    expect(body.organization.apusdBalance).toBe(shape === 'a' ? 13 : 12.75);
  });

  it('refuses to self-register on an admin-assigned plan', async () => {
    const res = await t.request('POST', '/api/v1/auth/register', { body: { name: 'Big Co', plan: 'white-label' } });
    expect(res.status).toBe(400);
    expect((await res.json()).code).toBe('BAD_REQUEST');
  });
});
