import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken } from '../helpers/admin.js';
import { asAdmin, getJson, type Json, toNextMonth } from '../helpers/billing.js';
import { closeDuePeriods } from '../../src/domain/billing/period-close.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { expectError } from '../helpers/expect-error.js';
import { registerOrg } from '../helpers/fixtures.js';

// Requests that move money take an Idempotency-Key the way the card processor's API does: the
// same key and body get the first answer again and move nothing; another body is refused; keys
// are the organization's and kept 24 h. (Card funding's key is tested in card-funding.test.ts.)

describe.each(DIALECTS)('Idempotency-Key on money requests on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
  });
  afterAll(async () => t?.close());

  const post = (url: string, key: string, body: unknown, idempotencyKey: string) =>
    t.request('POST', url, { key, body, headers: { 'idempotency-key': idempotencyKey } });

  it('answers a retried subscribe with the first answer and makes one subscription', async () => {
    const org = await registerOrg(t, { name: 'Retrier' });
    const body = { product: 'videos', interval: 'month' };
    const first = await post('/api/v1/billing/subscriptions', org.apiKey, body, 'sub-0001');
    expect(first.status).toBe(201);
    const again = await post('/api/v1/billing/subscriptions', org.apiKey, body, 'sub-0001');
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([201, 'true']);
    expect(await again.json()).toEqual(await first.json());
    expect(again.headers.get('x-ratelimit-limit')).not.toBeNull();
    expect((await getJson(t, '/api/v1/billing/subscriptions', org.apiKey)).subscriptions).toHaveLength(1);
  });

  it('refuses the same key with another body: 409 IDEMPOTENCY_KEY_REUSED, nothing done', async () => {
    const org = await registerOrg(t, { name: 'Mixed Up' });
    await post('/api/v1/billing/subscriptions', org.apiKey, { product: 'videos', interval: 'month' }, 'sub-0002');
    const other = await post(
      '/api/v1/billing/subscriptions',
      org.apiKey,
      { product: 'music', interval: 'month' },
      'sub-0002',
    );
    await expectError(other, 409, 'IDEMPOTENCY_KEY_REUSED');
    expect((await getJson(t, '/api/v1/billing/subscriptions', org.apiKey)).subscriptions).toHaveLength(1);
    await expectError(await post('/api/v1/billing/subscriptions', org.apiKey, {}, 'bad key'), 400, 'BAD_REQUEST');
  });

  it("keeps keys per organization: another organization's same key is its own request", async () => {
    const a = await registerOrg(t, { name: 'Org A' });
    const b = await registerOrg(t, { name: 'Org B' });
    expect(
      (await post('/api/v1/billing/subscriptions', a.apiKey, { product: 'videos', interval: 'month' }, 'shared-key'))
        .status,
    ).toBe(201);
    const theirs = await post(
      '/api/v1/billing/subscriptions',
      b.apiKey,
      { product: 'music', interval: 'month' },
      'shared-key',
    );
    expect([theirs.status, theirs.headers.get('idempotent-replayed')]).toEqual([201, null]);
  });

  it('forgets a key after 24 hours', async () => {
    const org = await registerOrg(t, { name: 'Patient' });
    await post('/api/v1/billing/subscriptions', org.apiKey, { product: 'cards', interval: 'month' }, 'day-old-key');
    t.clock.advance(23 * 3_600_000);
    const within = await post(
      '/api/v1/billing/subscriptions',
      org.apiKey,
      { product: 'tickets', interval: 'month' },
      'day-old-key',
    );
    await expectError(within, 409, 'IDEMPOTENCY_KEY_REUSED');
    t.clock.advance(3_600_000 + 1000);
    const after = await post(
      '/api/v1/billing/subscriptions',
      org.apiKey,
      { product: 'tickets', interval: 'month' },
      'day-old-key',
    );
    expect(after.status).toBe(201);
  });

  it('lets go of a key whose request failed: a retry after the balance is credited pays the invoice once', async () => {
    const org = await registerOrg(t, { name: 'Short' });
    await t.request('POST', '/api/v1/billing/subscriptions', {
      key: org.apiKey,
      body: { product: 'videos', interval: 'month' },
    });
    toNextMonth(t, 2 * 3_600_000);
    await closeDuePeriods(t.ctx);
    const [invoice] = (await getJson(t, '/api/v1/billing/invoices', org.apiKey)).invoices as [Json];
    const pay = () => post(`/api/v1/billing/invoices/${invoice.id}/pay`, org.apiKey, undefined, 'pay-0001');
    await expectError(await pay(), 402, 'INSUFFICIENT_BALANCE');
    const admin = await asAdmin(t);
    await admin('POST', `/api/v1/admin/organizations/${org.organizationId}/credit`, { amount: 150 });
    const paid = await pay();
    expect(paid.status).toBe(200);
    const replayed = await pay();
    expect([replayed.status, replayed.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    expect((await getJson(t, '/api/v1/billing/balance', org.apiKey)).apusdBalance).toBe(51);
  });

  it("answers an admin's retried credit and plan change once", async () => {
    const org = await registerOrg(t, { name: 'Admin Retries' });
    const token = await adminToken(t);
    const admin = (url: string, body: unknown) =>
      t.request('POST', url, {
        body,
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': `admin-${url.split('/').pop()}` },
      });
    const credit = `/api/v1/admin/organizations/${org.organizationId}/credit`;
    const first = (await (await admin(credit, { amount: 10 })).json()) as Json;
    const again = await admin(credit, { amount: 10 });
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    expect(await again.json()).toEqual(first);
    expect((await getJson(t, '/api/v1/billing/balance', org.apiKey)).apusdBalance).toBe(10);
    const plan = `/api/v1/admin/organizations/${org.organizationId}/plan`;
    expect((await admin(plan, { plan: 'enterprise' })).status).toBe(200);
    await expectError(await admin(plan, { plan: 'paid' }), 409, 'IDEMPOTENCY_KEY_REUSED');
  });
});
