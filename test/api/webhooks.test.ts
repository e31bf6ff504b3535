import { createHmac, timingSafeEqual } from 'node:crypto';
import fs from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { iso } from '../../src/clock.js';
import type { Context } from '../../src/context.js';
import { createContext } from '../../src/create-context.js';
import type { DeliveryRow } from '../../src/db/repos/index.js';
import { suspendOrganization } from '../../src/domain/admin/organizations.js';
import { recordEvent } from '../../src/domain/events.js';
import { BACKOFF_MS, MAX_ATTEMPTS } from '../../src/domain/webhooks/deliver.js';
import { WebhookWorker } from '../../src/domain/webhooks/worker.js';
import { createLogger } from '../../src/log.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { registerOrg } from '../helpers/fixtures.js';

interface Envelope {
  id: string;
  type: string;
  createdAt: string;
  organizationId: string;
  data: Record<string, unknown>;
}

interface Hit {
  /** The raw request body, byte for byte as received. */
  raw: Buffer;
  headers: IncomingHttpHeaders;
  envelope: Envelope;
  /** What the receiver answered. */
  status: number;
}

/** A real HTTP webhook receiver on 127.0.0.1 that keeps every request and answers as scripted. */
class Receiver {
  readonly hits: Hit[] = [];
  /** Statuses to answer with, one per request in order; once used up, `status`. */
  script: number[] = [];
  status = 200;
  /** Holds each answer back this long (widens the window in which two workers could collide). */
  delayMs = 0;
  url = '';
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const status = this.script.shift() ?? this.status;
      this.hits.push({ raw, headers: req.headers, envelope: JSON.parse(raw.toString('utf8')) as Envelope, status });
      setTimeout(() => res.writeHead(status, { 'content-type': 'text/plain' }).end('ok'), this.delayMs);
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hooks/drm`;
    return this;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** How many times each delivery id arrived. */
  countsById(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const h of this.hits) counts.set(h.envelope.id, (counts.get(h.envelope.id) ?? 0) + 1);
    return counts;
  }
}

/** What a receiver must do: recompute the HMAC over the raw body and compare in constant time. */
function signedWith(hit: Hit, secret: string): boolean {
  const header = hit.headers['x-service-signature'];
  if (typeof header !== 'string' || !/^[0-9a-f]{64}$/.test(header)) return false;
  const expected = createHmac('sha256', secret).update(hit.raw).digest();
  const given = Buffer.from(header, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** Checks what every delivery must carry: the envelope's shape, its event header, its signature. */
function expectWellFormed(hit: Hit, secret: string, organizationId: string) {
  expect(Object.keys(hit.envelope).sort()).toEqual(['createdAt', 'data', 'id', 'organizationId', 'type']);
  expect(hit.envelope.organizationId).toBe(organizationId);
  expect(hit.envelope.createdAt).toBe(new Date(hit.envelope.createdAt).toISOString());
  expect(hit.headers['x-service-event']).toBe(hit.envelope.type);
  expect(hit.headers['content-type']).toMatch(/^application\/json/);
  expect(signedWith(hit, secret)).toBe(true);
}

const quietLog = () => createLogger('silent');

/** Writes a viewer.blocked event the way a domain action does: inside its transaction, ringing the bell after the commit (unless wake is false). */
async function emit(ctx: Context, organizationId: string, options: { wake?: boolean } = {}): Promise<string> {
  const id = await ctx.db.transaction((tx) =>
    recordEvent(options.wake === false ? { ...tx, afterCommit: () => {} } : tx, organizationId, 'viewer.blocked', {
      viewerId: 'viewer-1',
      reason: 'leaked a screener',
    }),
  );
  return id;
}

async function deliveryRow(ctx: Context, id: string): Promise<DeliveryRow> {
  const row = await ctx.repos.webhookDeliveries.find(id);
  if (!row) throw new Error(`no delivery ${id}`);
  return row;
}

describe.each(DIALECTS)('webhooks on %s', (dialect) => {
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    // Last opened, first closed: workers and contexts before the receivers they talk to.
    while (cleanups.length > 0) await cleanups.pop()?.();
  });

  async function app(config: { allowPrivateWebhooks?: boolean } = { allowPrivateWebhooks: true }): Promise<TestApp> {
    const t = await makeTestApp(dialect, { config });
    cleanups.push(() => t.close());
    return t;
  }

  async function receiver(): Promise<Receiver> {
    const r = await new Receiver().start();
    cleanups.push(() => r.close());
    return r;
  }

  /** A test app whose context the test closes itself (the process that stops); cleanup closes it otherwise. */
  async function appToRestart() {
    const t = await makeTestApp(dialect, { config: { allowPrivateWebhooks: true } });
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await t.ctx.db.close();
    };
    cleanups.push(async () => {
      await stop();
      fs.rmSync(t.dir, { recursive: true, force: true });
    });
    return { t, stop };
  }

  /** A second context on the same database and data dir: another server process, as far as the outbox goes. */
  async function secondContext(t: TestApp): Promise<Context> {
    const ctx = await createContext(t.ctx.config, { clock: t.clock, log: quietLog() });
    cleanups.push(() => ctx.db.close());
    return ctx;
  }

  /** An organization whose webhook points at the receiver; answers with its key, id and secret. */
  async function hookedOrg(t: TestApp, r: Receiver) {
    const reg = await registerOrg(t);
    const res = await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: { webhookUrl: r.url } });
    expect(res.status).toBe(200);
    return { ...reg, secret: ((await res.json()) as { webhookSecret: string }).webhookSecret };
  }

  async function deliveriesApi(t: TestApp, key: string) {
    const res = await t.request('GET', '/api/v1/webhook/deliveries', { key });
    expect(res.status).toBe(200);
    return ((await res.json()) as { deliveries: Array<Record<string, unknown>> }).deliveries;
  }

  describe('settings', () => {
    it('PUT /webhook sets the URL and answers with the URL and the secret issued at registration', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await registerOrg(t);
      const res = await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: { webhookUrl: r.url } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ webhookUrl: r.url, webhookSecret: reg.webhookSecret });
      expect((await t.ctx.repos.organizations.find(reg.organizationId))?.webhookUrl).toBe(r.url);
    });

    it('regenerateSecret answers with a new secret; later deliveries are signed with it and not with the old one', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      // Recorded before the change, sent after it: a retry signs with the secret of its time.
      await emit(t.ctx, reg.organizationId);

      const res = await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: { regenerateSecret: true } });
      expect(res.status).toBe(200);
      const { webhookUrl, webhookSecret } = (await res.json()) as { webhookUrl: string; webhookSecret: string };
      expect(webhookUrl).toBe(r.url);
      expect(webhookSecret).toMatch(/^[0-9a-f]{64}$/);
      expect(webhookSecret).not.toBe(reg.webhookSecret);

      expect((await t.request('POST', '/api/v1/webhook/test', { key: reg.apiKey })).status).toBe(200);
      expect(await new WebhookWorker(t.ctx).tick()).toBe(1);
      expect(r.hits.map((h) => h.envelope.type).sort()).toEqual(['viewer.blocked', 'webhook.test']);
      for (const hit of r.hits) {
        expectWellFormed(hit, webhookSecret, reg.organizationId);
        expect(signedWith(hit, reg.webhookSecret)).toBe(false);
      }

      // Asking again without regenerating answers with the current secret, unchanged.
      const again = await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: { webhookUrl: r.url } });
      expect(await again.json()).toEqual({ webhookUrl: r.url, webhookSecret });
    });

    it('refuses loopback and private URLs with BAD_REQUEST when private webhooks are not allowed', async () => {
      const t = await app({});
      expect(t.ctx.config.allowPrivateWebhooks).toBe(false);
      const reg = await registerOrg(t);
      const r = await receiver();
      for (const webhookUrl of [
        r.url,
        'http://127.0.0.1:8080/hook',
        'http://127.1/hook',
        'http://2130706433/hook',
        'http://10.1.2.3/hook',
        'http://172.16.0.9/hook',
        'http://192.168.1.20/hook',
        'http://169.254.169.254/latest/meta-data',
        'http://0.0.0.0/hook',
        'http://[::1]/hook',
        'http://[::ffff:127.0.0.1]/hook',
        'http://[::127.0.0.1]/hook',
        'http://[fd00::1]/hook',
        'http://[fe80::1]/hook',
        'http://localhost/hook',
        'http://localhost./hook',
        'http://LOCALHOST:3000/hook',
        'http://api.localhost/hook',
        'http://printer.local/hook',
      ]) {
        const res = await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: { webhookUrl } });
        expect({ webhookUrl, status: res.status }).toEqual({ webhookUrl, status: 400 });
        expect(await res.json()).toEqual({ error: expect.any(String), code: 'BAD_REQUEST', status: 400 });
      }
      expect((await t.ctx.repos.organizations.find(reg.organizationId))?.webhookUrl).toBeNull();

      // A public address is accepted (an IP literal, so that no DNS is involved).
      const ok = await t.request('PUT', '/api/v1/webhook', {
        key: reg.apiKey,
        body: { webhookUrl: 'https://93.184.215.14/hook' },
      });
      expect(ok.status).toBe(200);
      expect((await ok.json()).webhookUrl).toBe('https://93.184.215.14/hook');
    });

    it('refuses URLs that are not http(s), even when private webhooks are allowed', async () => {
      for (const t of [await app(), await app({})]) {
        const reg = await registerOrg(t);
        for (const webhookUrl of [
          'ftp://example.com/hook',
          'javascript:alert(1)',
          'file:///etc/passwd',
          'data:text/plain,hi',
          'not a url',
          'https://user:pw@example.com/hook',
          42,
          { url: 'https://example.com' },
        ]) {
          const res = await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: { webhookUrl } });
          expect({ webhookUrl, status: res.status }).toEqual({ webhookUrl, status: 400 });
          expect((await res.json()).code).toBe('BAD_REQUEST');
        }
        expect((await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: {} })).status).toBe(400);
        expect((await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: 'nope' })).status).toBe(400);
      }
    });

    it('webhookUrl null clears the webhook: test sends are refused and events recorded meanwhile are skipped, not sent', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      const res = await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: { webhookUrl: null } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ webhookUrl: null, webhookSecret: reg.webhookSecret });
      expect((await t.request('POST', '/api/v1/webhook/test', { key: reg.apiKey })).status).toBe(400);

      const id = await emit(t.ctx, reg.organizationId);
      expect(await new WebhookWorker(t.ctx).tick()).toBe(1);
      expect(await deliveryRow(t.ctx, id)).toMatchObject({ status: 'skipped', attempts: 0, responseCode: null });
      t.clock.advance(86_400_000);
      expect(await new WebhookWorker(t.ctx).tick()).toBe(0);
      expect(r.hits).toHaveLength(0);
      const bad = await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: { regenerateSecret: 'yes' } });
      expect(bad.status).toBe(400);
    });

    it('needs a key with the billing scope', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await registerOrg(t, { scopes: ['catalog'] });
      const put = await t.request('PUT', '/api/v1/webhook', { key: reg.apiKey, body: { webhookUrl: r.url } });
      expect(put.status).toBe(403);
      expect((await put.json()).code).toBe('INSUFFICIENT_SCOPE');
      expect((await t.request('POST', '/api/v1/webhook/test', { key: reg.apiKey })).status).toBe(403);
      expect((await t.request('GET', '/api/v1/webhook/deliveries', { key: reg.apiKey })).status).toBe(403);
      expect((await t.request('GET', '/api/v1/webhook/deliveries')).status).toBe(401);
      expect(r.hits).toHaveLength(0);
    });
  });

  describe('test sends', () => {
    it('POST /webhook/test sends a signed webhook.test now and reports the receiver’s 200', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      const res = await t.request('POST', '/api/v1/webhook/test', { key: reg.apiKey });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ success: true, responseCode: 200 });

      expect(r.hits).toHaveLength(1);
      const hit = r.hits[0] as Hit;
      expectWellFormed(hit, reg.webhookSecret, reg.organizationId);
      expect(hit.envelope.type).toBe('webhook.test');
      expect(hit.envelope.createdAt).toBe(iso(t.clock.now()));
      expect(hit.headers['x-service-delivery']).toBe(hit.envelope.id);

      const deliveries = await deliveriesApi(t, reg.apiKey);
      expect(deliveries).toHaveLength(1);
      expect(deliveries[0]).toMatchObject({
        id: hit.envelope.id,
        eventType: 'webhook.test',
        status: 'delivered',
        attempts: 1,
        responseCode: 200,
        createdAt: iso(t.clock.now()),
        deliveredAt: iso(t.clock.now()),
      });
    });

    it('reports {success: false, responseCode: 500} when the receiver answers 500, and does not retry it', async () => {
      const t = await app();
      const r = await receiver();
      r.status = 500;
      const reg = await hookedOrg(t, r);
      const res = await t.request('POST', '/api/v1/webhook/test', { key: reg.apiKey });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ success: false, responseCode: 500 });
      expect(r.hits).toHaveLength(1);

      const [delivery] = await deliveriesApi(t, reg.apiKey);
      expect(delivery).toMatchObject({
        eventType: 'webhook.test',
        status: 'failed',
        attempts: 1,
        responseCode: 500,
        createdAt: iso(t.clock.now()),
        deliveredAt: null,
      });

      // A test send is the request's own business: the worker never sends it again.
      t.clock.advance(BACKOFF_MS[0] as number);
      expect(await new WebhookWorker(t.ctx).tick()).toBe(0);
      expect(r.hits).toHaveLength(1);
    });

    it('answers 400 BAD_REQUEST when no webhookUrl is set, and sends nothing', async () => {
      const t = await app();
      const reg = await registerOrg(t);
      const res = await t.request('POST', '/api/v1/webhook/test', { key: reg.apiKey });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: expect.any(String), code: 'BAD_REQUEST', status: 400 });
      expect(await deliveriesApi(t, reg.apiKey)).toEqual([]);
    });

    it('reports {success: false, responseCode: 0} when the receiver cannot be reached, and lists the delivery with responseCode 0', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      await r.close();
      const res = await t.request('POST', '/api/v1/webhook/test', { key: reg.apiKey });
      expect(await res.json()).toEqual({ success: false, responseCode: 0 });
      const [delivery] = await deliveriesApi(t, reg.apiKey);
      expect(delivery).toMatchObject({ status: 'failed', attempts: 1, responseCode: 0, deliveredAt: null });
    });
  });

  describe('outbox and worker', () => {
    it('delivers organization.suspended from suspending the organization, and records attempts and responseCode', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      await suspendOrganization(t.ctx, reg.organizationId, { reason: 'chargeback fraud' });

      // In the outbox, not yet sent: nothing is sent from inside the transaction.
      const [queued] = await t.ctx.repos.webhookDeliveries.listForOrg(reg.organizationId, 10);
      expect(queued).toMatchObject({
        eventType: 'organization.suspended',
        status: 'pending',
        attempts: 0,
        responseCode: null,
      });
      expect(r.hits).toHaveLength(0);

      expect(await new WebhookWorker(t.ctx).tick()).toBe(1);
      expect(r.hits).toHaveLength(1);
      const hit = r.hits[0] as Hit;
      expectWellFormed(hit, reg.webhookSecret, reg.organizationId);
      expect(hit.envelope).toEqual({
        id: queued?.id,
        type: 'organization.suspended',
        createdAt: iso(t.clock.now()),
        organizationId: reg.organizationId,
        data: { organizationId: reg.organizationId, reason: 'chargeback fraud' },
      });
      expect(await deliveryRow(t.ctx, hit.envelope.id)).toMatchObject({
        status: 'delivered',
        attempts: 1,
        responseCode: 200,
        deliveredAt: t.clock.now(),
        leaseUntil: null,
      });

      // Delivered means done: later passes send nothing.
      t.clock.advance(86_400_000);
      expect(await new WebhookWorker(t.ctx).tick()).toBe(0);
      expect(r.hits).toHaveLength(1);
    });

    it('retries with backoff: due attempts only, retrying then delivered after 503, 503, 200', async () => {
      const t = await app();
      const r = await receiver();
      r.script = [503, 503, 200];
      const reg = await hookedOrg(t, r);
      const id = await emit(t.ctx, reg.organizationId);
      const worker = new WebhookWorker(t.ctx);
      const start = t.clock.now();

      expect(await worker.tick()).toBe(1);
      expect(await deliveryRow(t.ctx, id)).toMatchObject({
        status: 'retrying',
        attempts: 1,
        responseCode: 503,
        nextAttemptAt: start + (BACKOFF_MS[0] as number),
      });
      const [listed] = await deliveriesApi(t, reg.apiKey);
      expect(listed).toMatchObject({ status: 'retrying', attempts: 1, responseCode: 503, deliveredAt: null });

      t.clock.advance((BACKOFF_MS[0] as number) - 1);
      expect(await worker.tick()).toBe(0);
      expect(r.hits).toHaveLength(1);
      t.clock.advance(1);
      expect(await worker.tick()).toBe(1);
      expect(await deliveryRow(t.ctx, id)).toMatchObject({
        status: 'retrying',
        attempts: 2,
        responseCode: 503,
        nextAttemptAt: t.clock.now() + (BACKOFF_MS[1] as number),
      });

      t.clock.advance((BACKOFF_MS[1] as number) - 1);
      expect(await worker.tick()).toBe(0);
      expect(r.hits).toHaveLength(2);
      t.clock.advance(1);
      expect(await worker.tick()).toBe(1);
      expect(await deliveryRow(t.ctx, id)).toMatchObject({
        status: 'delivered',
        attempts: 3,
        responseCode: 200,
        deliveredAt: t.clock.now(),
      });
      const [done] = await deliveriesApi(t, reg.apiKey);
      expect(done).toMatchObject({
        status: 'delivered',
        attempts: 3,
        responseCode: 200,
        deliveredAt: iso(t.clock.now()),
      });

      // Every attempt sent the same signed bytes.
      expect(r.hits.map((h) => h.status)).toEqual([503, 503, 200]);
      for (const hit of r.hits) {
        expectWellFormed(hit, reg.webhookSecret, reg.organizationId);
        expect(hit.raw.equals((r.hits[0] as Hit).raw)).toBe(true);
      }
      t.clock.advance(86_400_000);
      expect(await worker.tick()).toBe(0);
      expect(r.hits).toHaveLength(3);
    });

    it(`marks a delivery failed after ${MAX_ATTEMPTS} failed attempts and never attempts it again`, async () => {
      const t = await app();
      const r = await receiver();
      r.status = 500;
      const reg = await hookedOrg(t, r);
      const id = await emit(t.ctx, reg.organizationId);
      const worker = new WebhookWorker(t.ctx);

      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        expect(await worker.tick()).toBe(1);
        const row = await deliveryRow(t.ctx, id);
        expect(row).toMatchObject({ attempts: attempt, responseCode: 500 });
        const wait = BACKOFF_MS[attempt - 1];
        if (wait === undefined) break;
        expect(row.status).toBe('retrying');
        t.clock.advance(wait - 1);
        expect(await worker.tick()).toBe(0);
        t.clock.advance(1);
      }
      expect(await deliveryRow(t.ctx, id)).toMatchObject({
        status: 'failed',
        attempts: MAX_ATTEMPTS,
        responseCode: 500,
        deliveredAt: null,
      });
      const [listed] = await deliveriesApi(t, reg.apiKey);
      expect(listed).toMatchObject({
        status: 'failed',
        attempts: MAX_ATTEMPTS,
        responseCode: 500,
        nextAttemptAt: null,
      });

      t.clock.advance(30 * 86_400_000);
      expect(await worker.tick()).toBe(0);
      expect(r.hits).toHaveLength(MAX_ATTEMPTS);
    });

    it('counts an attempt with no responseCode when the receiver cannot be reached, and retries it', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      await r.close();
      const id = await emit(t.ctx, reg.organizationId);
      expect(await new WebhookWorker(t.ctx).tick()).toBe(1);
      const row = await deliveryRow(t.ctx, id);
      expect(row).toMatchObject({ status: 'retrying', attempts: 1, responseCode: null, deliveredAt: null });
      expect(row.lastError).toEqual(expect.any(String));
      const [listed] = await deliveriesApi(t, reg.apiKey);
      expect(listed).toMatchObject({ status: 'retrying', attempts: 1, responseCode: 0 });
    });

    it('an event whose transaction throws leaves no delivery behind', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      await expect(
        t.ctx.db.transaction(async (tx) => {
          await tx.repos.organizations.update(reg.organizationId, { name: 'Renamed' });
          await recordEvent(tx, reg.organizationId, 'viewer.blocked', { viewerId: 'v-1', reason: 'leak' });
          throw new Error('boom');
        }),
      ).rejects.toThrow('boom');

      expect(await t.ctx.repos.webhookDeliveries.listForOrg(reg.organizationId, 10)).toEqual([]);
      expect((await t.ctx.repos.organizations.find(reg.organizationId))?.name).toBe('Acme Films');
      expect(await new WebhookWorker(t.ctx).tick()).toBe(0);
      expect(r.hits).toHaveLength(0);

      // The same transaction without the throw keeps both the change and its event.
      await t.ctx.db.transaction(async (tx) => {
        await tx.repos.organizations.update(reg.organizationId, { name: 'Renamed' });
        await recordEvent(tx, reg.organizationId, 'viewer.blocked', { viewerId: 'v-1', reason: 'leak' });
      });
      expect(await t.ctx.repos.webhookDeliveries.listForOrg(reg.organizationId, 10)).toHaveLength(1);
      expect(await new WebhookWorker(t.ctx).tick()).toBe(1);
      expect(r.hits).toHaveLength(1);
    });
  });

  describe('restarts and several workers', () => {
    it('an event recorded before a restart is delivered, once, by the next process', async () => {
      const { t, stop } = await appToRestart();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      const id = await emit(t.ctx, reg.organizationId);
      await stop();

      const next = await secondContext(t);
      expect(await new WebhookWorker(next).tick()).toBe(1);
      expect(r.hits.map((h) => h.envelope.id)).toEqual([id]);
      expectWellFormed(r.hits[0] as Hit, reg.webhookSecret, reg.organizationId);
      expect(await deliveryRow(next, id)).toMatchObject({ status: 'delivered', attempts: 1, responseCode: 200 });

      expect(await new WebhookWorker(next).tick()).toBe(0);
      t.clock.advance(86_400_000);
      expect(await new WebhookWorker(next).tick()).toBe(0);
      expect(r.hits).toHaveLength(1);
    });

    it('a delivery leased by a worker that died is attempted again once its 60 s lease runs out, not before', async () => {
      const { t, stop } = await appToRestart();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      const id = await emit(t.ctx, reg.organizationId);
      const now = t.clock.now();
      // The worker of the first process leases it and dies before sending or recording anything.
      const leased = await t.ctx.repos.webhookDeliveries.claimDue(now, now + 60_000, 10);
      expect(leased.map((d) => d.id)).toEqual([id]);
      await stop();

      const next = await secondContext(t);
      const worker = new WebhookWorker(next);
      expect(await worker.tick()).toBe(0);
      t.clock.advance(59_999);
      expect(await worker.tick()).toBe(0);
      expect(r.hits).toHaveLength(0);
      t.clock.advance(1);
      expect(await worker.tick()).toBe(1);
      expect(r.hits.map((h) => h.envelope.id)).toEqual([id]);
      expect(await deliveryRow(next, id)).toMatchObject({ status: 'delivered', attempts: 1, leaseUntil: null });
      expect(await worker.tick()).toBe(0);
    });

    it('workers ticking concurrently on one database never deliver an event twice', async () => {
      const t = await app();
      const r = await receiver();
      r.delayMs = 15;
      const reg = await hookedOrg(t, r);
      const other = await secondContext(t);
      const ids = new Set<string>();
      for (let i = 0; i < 30; i++) ids.add(await emit(t.ctx, reg.organizationId));
      const workers = [t.ctx, t.ctx, other, other].map((ctx) => new WebhookWorker(ctx, { batch: 4 }));

      let sent = 0;
      for (let round = 0; round < 20; round++) {
        const counts = await Promise.all(workers.map((w) => w.tick()));
        const n = counts.reduce((a, b) => a + b, 0);
        if (n === 0) break;
        sent += n;
      }
      expect(sent).toBe(ids.size);
      const counts = r.countsById();
      expect([...counts.keys()].sort()).toEqual([...ids].sort());
      expect([...counts.values()].every((n) => n === 1)).toBe(true);
      for (const row of await t.ctx.repos.webhookDeliveries.listForOrg(reg.organizationId, 100)) {
        expect(row).toMatchObject({ status: 'delivered', attempts: 1, responseCode: 200 });
      }
    });
  });

  describe('running worker', () => {
    it('after start(), an event is delivered promptly on wake, without manual ticks; after stop(), nothing is sent', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      // A long poll interval: only the wake can explain a prompt delivery.
      const worker = new WebhookWorker(t.ctx, { pollMs: 60_000 });
      worker.start();
      cleanups.push(() => worker.stop());

      await suspendOrganization(t.ctx, reg.organizationId, { reason: 'unpaid invoices' });
      await vi.waitFor(() => expect(r.hits).toHaveLength(1), { timeout: 1500, interval: 20 });
      expect((r.hits[0] as Hit).envelope.type).toBe('organization.suspended');

      await worker.stop();
      const id = await emit(t.ctx, reg.organizationId);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(r.hits).toHaveLength(1);
      expect((await deliveryRow(t.ctx, id)).status).toBe('pending');
    });

    it('stop() lets a send in flight finish and record its outcome before it resolves', async () => {
      const t = await app();
      const r = await receiver();
      r.delayMs = 200;
      const reg = await hookedOrg(t, r);
      const worker = new WebhookWorker(t.ctx, { pollMs: 60_000 });
      worker.start();
      cleanups.push(() => worker.stop());
      const id = await emit(t.ctx, reg.organizationId);
      // The receiver has the request and has not answered yet.
      await vi.waitFor(() => expect(r.hits).toHaveLength(1), { timeout: 1500, interval: 5 });
      await worker.stop();
      expect(await deliveryRow(t.ctx, id)).toMatchObject({ status: 'delivered', attempts: 1, responseCode: 200 });
    });

    it('after start(), polling alone picks up an event recorded without a wake', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      const worker = new WebhookWorker(t.ctx, { pollMs: 25 });
      worker.start();
      cleanups.push(() => worker.stop());
      const id = await emit(t.ctx, reg.organizationId, { wake: false });
      await vi.waitFor(() => expect(r.hits.map((h) => h.envelope.id)).toEqual([id]), { timeout: 1500, interval: 20 });
      await vi.waitFor(async () => expect((await deliveryRow(t.ctx, id)).status).toBe('delivered'), { timeout: 1500 });
    });

    it('a wake that arrives just as a pass is finishing is not lost', async () => {
      const t = await app();
      const r = await receiver();
      const reg = await hookedOrg(t, r);
      let armed = true;
      let lateEvent: string | undefined;
      // The first pass finds nothing; as it finishes, a request commits an event (which that
      // pass's claim could not see) and wakes the worker, after the loop has decided it is done.
      class LateWakeWorker extends WebhookWorker {
        override tick(): Promise<number> {
          const late = armed;
          armed = false;
          const pass = super.tick().then(async (n) => {
            if (late) lateEvent = await emit(t.ctx, reg.organizationId, { wake: false });
            return n;
          });
          // Registered after the loop's own await on this pass, so it runs right after the loop
          // has looked at its `again` flag and before the loop has let go of the pass.
          if (late) queueMicrotask(() => void pass.then(() => this.wake()));
          return pass;
        }
      }
      const worker = new LateWakeWorker(t.ctx, { pollMs: 60_000 });
      worker.start();
      cleanups.push(() => worker.stop());
      await vi.waitFor(() => expect(lateEvent).toBeDefined(), { timeout: 1500, interval: 10 });
      await vi.waitFor(() => expect(r.hits.map((h) => h.envelope.id)).toEqual([lateEvent]), {
        timeout: 1500,
        interval: 20,
      });
    });
  });
});
