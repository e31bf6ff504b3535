import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/crypto/tokens.js';
import { newAccount, siweMessage } from '../helpers/admin.js';
import {
  type ApiFixture,
  credentialsOf,
  idsFor,
  type SendInit,
  sendTo,
  useApiFixture,
} from '../helpers/api-fixture.js';
import { INVALID_FIELDS, INVALID_QUERIES } from '../helpers/bad-input-cases.js';
import { DIALECTS, type TestApp } from '../helpers/context.js';
import { expectError } from '../helpers/expect-error.js';
import { registerOrg } from '../helpers/fixtures.js';
import { API_ENDPOINTS, type ApiEndpoint, endpointNamed, pathOf } from '../helpers/openapi-endpoints.js';

// A table-driven matrix of requests of the wrong form, over every endpoint the OpenAPI description
// names (test/helpers/openapi-endpoints.ts reads from it which endpoints read a JSON body, which
// of its fields are strings, which body is required): malformed JSON, JSON that is no object,
// fields of the wrong type, each endpoint's invalid values and queries (test/helpers/bad-input-
// cases.ts), oversized bodies, unknown ids, unknown routes and wrong methods. Each must answer with
// the spec's error body {error, code, status} (status equal to the HTTP status), never a 500, and
// leave nothing half-written behind. Wrong credentials are abuse.test.ts's.

const MIB = 1024 * 1024;

const having = (test: (e: ApiEndpoint) => boolean) => API_ENDPOINTS.filter(test).map((e) => [e.name, e] as const);
const JSON_BODIES = having((e) => e.body === 'json');
// The upload is read under its own limit (config.maxUploadBytes; upload.test.ts), not the JSON one.
const WITH_BODY = having((e) => e.method !== 'GET' && e.body !== 'form');

const MALFORMED_JSON = [
  '{bad',
  '{"name":',
  '{"name": "x",}',
  "{'name': 'x'}",
  'nul',
  '\u0000',
  '{"name": "x"} trailing',
];
const NOT_AN_OBJECT = ['[]', '[{"name":"x"}]', '"name"', '42', 'true', 'null'];
const WRONG_TYPES = [42, true, [], { nested: 'x' }];
const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'];

/** Each documented path with a method it does not serve, and an endpoint of it for the credentials and ids. */
const WRONG_METHODS = [...new Set(API_ENDPOINTS.map((e) => e.path))].flatMap((path) => {
  const served = API_ENDPOINTS.filter((e) => e.path === path);
  const e = served[0] as ApiEndpoint;
  return METHODS.filter((m) => !served.some((x) => x.method === m)).map((m) => [m, path, e] as const);
});

describe.each(DIALECTS)('bad input on %s', (dialect) => {
  const fx = useApiFixture(dialect);
  let t: TestApp;
  let f: ApiFixture;
  beforeAll(() => {
    ({ t, f } = fx);
  });
  const send = (e: ApiEndpoint, init?: SendInit) => sendTo(t, f, e, init);

  /** A JSON text of exactly `bytes` bytes: {"name":"Padded","pad":"aaa…"}. */
  const paddedJson = (bytes: number) => {
    const head = '{"name":"Padded","pad":"';
    return `${head}${'a'.repeat(bytes - head.length - 2)}"}`;
  };

  /** The same JSON as a stream of 64 KiB chunks, so the request carries no Content-Length. */
  function chunked(text: string): ReadableStream<Uint8Array> {
    const bytes = new TextEncoder().encode(text);
    let at = 0;
    return new ReadableStream({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        controller.enqueue(bytes.subarray(at, at + 64 * 1024));
        at += 64 * 1024;
      },
    });
  }

  const sendChunked = (e: ApiEndpoint, text: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const { key } = credentialsOf(f, e);
    if (key) headers.authorization = `Bearer ${key}`;
    // duplex 'half' is what Node's fetch needs for a stream body (absent from the RequestInit typings).
    const init: RequestInit & { duplex: 'half' } = { method: e.method, headers, body: chunked(text), duplex: 'half' };
    const req = new Request(`http://localhost${pathOf(e, idsFor(f, e))}`, init);
    expect(req.headers.get('content-length')).toBeNull();
    return t.app.request(req);
  };

  describe('malformed bodies', () => {
    it.each(JSON_BODIES)('%s with malformed JSON is 400 BAD_REQUEST', async (_, e) => {
      for (const body of MALFORMED_JSON) await expectError(await send(e, { body }), 400, 'BAD_REQUEST');
    });

    it.each(JSON_BODIES)('%s with JSON that is not an object is 400 BAD_REQUEST', async (_, e) => {
      for (const body of NOT_AN_OBJECT) await expectError(await send(e, { body }), 400, 'BAD_REQUEST');
    });

    it.each(JSON_BODIES.filter(([, e]) => e.bodyRequired))(
      '%s with an empty body or JSON null is 400 BAD_REQUEST (its body is required)',
      async (_, e) => {
        for (const body of ['', '   ', 'null']) await expectError(await send(e, { body }), 400, 'BAD_REQUEST');
        await expectError(await send(e), 400, 'BAD_REQUEST');
      },
    );

    it.each(JSON_BODIES.filter(([, e]) => e.fields.length > 0))(
      '%s with a string field of another type is 400 BAD_REQUEST',
      async (_, e) => {
        for (const field of e.fields)
          for (const value of WRONG_TYPES)
            await expectError(await send(e, { body: { [field]: value } }), 400, 'BAD_REQUEST');
      },
    );

    it.each(INVALID_FIELDS.map(([name, what, body, headers]) => [name, what, body, headers] as const))(
      '%s with %s is 400 BAD_REQUEST',
      async (name, _, body, headers) => {
        await expectError(await send(endpointNamed(name), { body: body(f), headers }), 400, 'BAD_REQUEST');
      },
    );

    it.each(INVALID_QUERIES)('%s with ?%s is 400 BAD_REQUEST', async (name, query) => {
      await expectError(await send(endpointNamed(name), { query }), 400, 'BAD_REQUEST');
    });

    it("a plan's terms that are not an object are named as the field to fix, not as the body", async () => {
      const res = await send(endpointNamed('POST /api/v1/admin/organizations/{id}/plan'), {
        body: { plan: 'paid', terms: 'cheap' },
      });
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: string }).error).toBe('terms must be a JSON object');
    });

    it('a sign-in message whose signature is not valid for it is 401 INVALID_ADMIN_TOKEN', async () => {
      const account = newAccount();
      const message = await siweMessage(t, account);
      for (const signature of ['0x1234', `0x${'ab'.repeat(65)}`, await newAccount().signMessage({ message })]) {
        const res = await t.request('POST', '/api/v1/admin/auth/verify', { body: { message, signature } });
        await expectError(res, 401, 'INVALID_ADMIN_TOKEN');
      }
    });

    it('a sign-in message for another host is 401 INVALID_ADMIN_TOKEN', async () => {
      const account = newAccount();
      const message = await siweMessage(t, account, { domain: 'evil.example' });
      const signature = await account.signMessage({ message });
      await expectError(
        await t.request('POST', '/api/v1/admin/auth/verify', { body: { message, signature } }),
        401,
        'INVALID_ADMIN_TOKEN',
      );
    });
  });

  describe('unknown ids', () => {
    const unknown = randomUUID();
    const cases: Array<
      [what: string, method: string, path: (f: ApiFixture) => string, body?: (f: ApiFixture) => unknown]
    > = [
      ['an unknown content id', 'GET', () => `/api/v1/catalog/${unknown}`],
      ['a content id that is no UUID', 'GET', () => '/api/v1/catalog/not-a-uuid'],
      ['a content id with bad percent-encoding', 'GET', () => '/api/v1/catalog/%E0%A4%A'],
      [
        'a license for an unknown organization',
        'POST',
        () => `/api/v1/admin/organizations/${unknown}/license`,
        () => ({ contentId: '*', contentType: 'video' }),
      ],
      [
        'a license for an organization id that is no UUID',
        'POST',
        () => '/api/v1/admin/organizations/nope/license',
        () => ({ contentId: '*', contentType: 'video' }),
      ],
      [
        'a license for unknown content',
        'POST',
        (x) => `/api/v1/admin/organizations/${x.target}/license`,
        () => ({ contentId: unknown, contentType: 'video' }),
      ],
      [
        'a rate limit for an unknown organization',
        'POST',
        () => `/api/v1/admin/organizations/${unknown}/rate-limit`,
        () => ({ rateLimitPerHour: 5 }),
      ],
      [
        'a rate limit for an organization id that is no UUID',
        'POST',
        () => '/api/v1/admin/organizations/%ZZ/rate-limit',
        () => ({ rateLimitPerHour: 5 }),
      ],
      [
        'a rate limit for an unknown key',
        'POST',
        (x) => `/api/v1/admin/organizations/${x.target}/rate-limit`,
        () => ({ rateLimitPerHour: 5, keyId: unknown }),
      ],
      [
        'a rate limit for a key id that is no UUID',
        'POST',
        (x) => `/api/v1/admin/organizations/${x.target}/rate-limit`,
        () => ({ rateLimitPerHour: 5, keyId: 'key-1' }),
      ],
      [
        'a suspension of an unknown organization',
        'POST',
        () => `/api/v1/admin/organizations/${unknown}/suspend`,
        () => ({ reason: 'x' }),
      ],
      [
        'a suspension of an organization id that is no UUID',
        'POST',
        () => '/api/v1/admin/organizations/1/suspend',
        () => ({ reason: 'x' }),
      ],
      ['a reactivation of an unknown organization', 'POST', () => `/api/v1/admin/organizations/${unknown}/reactivate`],
      [
        'a reactivation of an organization id that is no UUID',
        'POST',
        () => "/api/v1/admin/organizations/'%20or%201=1/reactivate",
      ],
    ];

    it.each(cases)('%s is 404 NOT_FOUND', async (_, method, path, body) => {
      const key = path(f).startsWith('/api/v1/admin') ? f.token : f.org.apiKey;
      await expectError(await t.request(method, path(f), { key, body: body?.(f) }), 404, 'NOT_FOUND');
    });

    it("a rate limit for another organization's key is 404 NOT_FOUND", async () => {
      const found = await t.ctx.repos.apiKeys.findByHash(hashApiKey(f.org.apiKey));
      const res = await t.request('POST', `/api/v1/admin/organizations/${f.target}/rate-limit`, {
        key: f.token,
        body: { rateLimitPerHour: 5, keyId: found?.key.id },
      });
      await expectError(res, 404, 'NOT_FOUND');
      expect((await t.ctx.repos.apiKeys.find(found?.key.id as string))?.rateLimitPerHour).toBeNull();
    });
  });

  describe('oversized bodies', () => {
    it.each(WITH_BODY)('%s with a Content-Length over 1 MiB is 413 PAYLOAD_TOO_LARGE', async (_, e) => {
      const body = paddedJson(MIB + 1);
      const res = await send(e, { body, headers: { 'content-length': String(body.length) } });
      await expectError(res, 413, 'PAYLOAD_TOO_LARGE');
    });

    it.each(JSON_BODIES)(
      '%s with a chunked body over 1 MiB and no Content-Length is 413 PAYLOAD_TOO_LARGE',
      async (_, e) => {
        await expectError(await sendChunked(e, paddedJson(2 * MIB)), 413, 'PAYLOAD_TOO_LARGE');
      },
    );

    it('a body of exactly 1 MiB is read; one byte more is refused', async () => {
      const before = await t.ctx.repos.organizations.count();
      const register = endpointNamed('POST /api/v1/auth/register');
      expect((await sendChunked(register, paddedJson(MIB))).status).toBe(201);
      await expectError(await sendChunked(register, paddedJson(MIB + 1)), 413, 'PAYLOAD_TOO_LARGE');
      await expectError(await send(register, { body: paddedJson(MIB + 1) }), 413, 'PAYLOAD_TOO_LARGE');
      expect(await t.ctx.repos.organizations.count()).toBe(before + 1);
    });
  });

  describe('unknown routes and wrong methods', () => {
    const UNKNOWN: Array<[method: string, path: string, auth: 'none' | 'key' | 'admin']> = [
      ['GET', '/', 'none'],
      ['GET', '/api', 'none'],
      ['GET', '/api/v1', 'none'],
      ['GET', '/api/v2/catalog', 'key'],
      ['GET', '/api/v1/nope', 'none'],
      ['POST', '/api/v1/auth/nope', 'none'],
      ['GET', '/api/v1/auth/verify/extra', 'key'],
      ['GET', '/api/v1/billing/plans/paid', 'none'],
      ['GET', '/api/v1/catalog/a/b', 'key'],
      ['GET', '/api/v1/webhook/nope', 'key'],
      ['GET', '/api/v1/admin/nope', 'admin'],
      ['POST', '/api/v1/admin/organizations/x/delete', 'admin'],
    ];
    it.each(UNKNOWN)('%s %s is 404 NOT_FOUND', async (method, path, auth) => {
      const key = auth === 'key' ? f.org.apiKey : auth === 'admin' ? f.token : undefined;
      await expectError(await t.request(method, path, { key }), 404, 'NOT_FOUND');
    });

    it.each(WRONG_METHODS)(
      '%s on %s, which it does not serve, is 404 NOT_FOUND (with the credentials the path asks for)',
      async (method, _, e) => {
        await expectError(await send({ ...e, method }), 404, 'NOT_FOUND');
      },
    );

    it('a wrong method on rotate does not rotate the key', async () => {
      await t.request('GET', '/api/v1/auth/rotate', { key: f.org.apiKey });
      expect((await t.request('GET', '/api/v1/auth/verify', { key: f.org.apiKey })).status).toBe(200);
    });
  });

  describe('nothing half-written stays', () => {
    it('a registration with an invalid field after valid ones leaves no organization', async () => {
      const before = await t.ctx.repos.organizations.count();
      for (const bad of [
        { walletAddress: '0xnot-an-address' },
        { signingAlgorithm: 'none' },
        { webhookUrl: 'http://192.168.1.1/hook' },
        { plan: 'enterprise' },
        { scopes: ['catalog', 'root'] },
      ]) {
        const res = await t.request('POST', '/api/v1/auth/register', {
          body: { name: 'Half Written', email: 'half@written.test', ...bad },
        });
        await expectError(res, 400, 'BAD_REQUEST');
      }
      await expectError(
        await sendChunked(endpointNamed('POST /api/v1/auth/register'), paddedJson(2 * MIB)),
        413,
        'PAYLOAD_TOO_LARGE',
      );
      expect(await t.ctx.repos.organizations.count()).toBe(before);
    });

    it('a failed license grant leaves no license', async () => {
      const target = await registerOrg(t, { name: 'No Licenses' });
      const path = `/api/v1/admin/organizations/${target.organizationId}/license`;
      for (const [body, status] of [
        [{ contentId: randomUUID(), contentType: 'video' }, 404],
        [{ contentId: f.song.id, contentType: 'video' }, 400],
        [{ contentId: f.film.id, contentType: 'video', pricePerStream: 'lots' }, 400],
        [{ contentId: f.film.id, contentType: 'video', watermarkingEnabled: 1 }, 400],
        [{ contentId: '*', contentType: 'video', licenseScope: 'specific' }, 400],
      ] as const) {
        const res = await t.request('POST', path, { key: f.token, body });
        expect(res.status, JSON.stringify(body)).toBe(status);
      }
      expect(await t.ctx.repos.licenses.countActive(target.organizationId)).toBe(0);
      expect(await t.ctx.repos.licenses.findFor(target.organizationId, f.film.id, 'video')).toBeUndefined();

      const unknown = randomUUID();
      const res = await t.request('POST', `/api/v1/admin/organizations/${unknown}/license`, {
        key: f.token,
        body: { contentId: '*', contentType: 'video' },
      });
      await expectError(res, 404, 'NOT_FOUND');
      expect(await t.ctx.repos.licenses.countActive(unknown)).toBe(0);
    });

    it('a failed rate-limit change leaves the limits as they were', async () => {
      const target = await registerOrg(t, { name: 'Limits Kept' });
      const path = `/api/v1/admin/organizations/${target.organizationId}/rate-limit`;
      const keyId = (await t.ctx.repos.apiKeys.findByHash(hashApiKey(target.apiKey)))?.key.id as string;
      for (const [body, status] of [
        [{ rateLimitPerHour: 5, monthlyStreamLimit: -1 }, 400],
        [{ rateLimitPerHour: 5, monthlyStreamLimit: 'many' }, 400],
        [{ rateLimitPerHour: 5, keyId: randomUUID() }, 404],
        [{ rateLimitPerHour: 0, keyId }, 400],
      ] as const) {
        const res = await t.request('POST', path, { key: f.token, body });
        expect(res.status, JSON.stringify(body)).toBe(status);
      }
      const org = await t.ctx.repos.organizations.find(target.organizationId);
      expect(org).toMatchObject({ rateLimitPerHour: null, monthlyStreamLimit: null });
      expect((await t.ctx.repos.apiKeys.find(keyId))?.rateLimitPerHour).toBeNull();
    });

    it('a failed suspension leaves the organization active', async () => {
      const target = await registerOrg(t, { name: 'Still Active' });
      const path = `/api/v1/admin/organizations/${target.organizationId}/suspend`;
      for (const body of [{}, { reason: 7 }, { reason: 'r'.repeat(501) }, '{bad']) {
        await expectError(await t.request('POST', path, { key: f.token, body }), 400, 'BAD_REQUEST');
      }
      expect((await t.ctx.repos.organizations.find(target.organizationId))?.isActive).toBe(true);
      expect((await t.request('GET', '/api/v1/auth/verify', { key: target.apiKey })).status).toBe(200);
    });

    it('a failed webhook update keeps the URL and the secret', async () => {
      const target = await registerOrg(t, { name: 'Webhook Kept' });
      const before = await t.ctx.repos.organizations.find(target.organizationId);
      for (const body of [
        { regenerateSecret: true, webhookUrl: 'ftp://93.184.215.14/' },
        { regenerateSecret: true, webhookUrl: 42 },
        { webhookUrl: 'http://127.0.0.1:9/hook', regenerateSecret: 'yes' },
      ]) {
        await expectError(await t.request('PUT', '/api/v1/webhook', { key: target.apiKey, body }), 400, 'BAD_REQUEST');
      }
      const after = await t.ctx.repos.organizations.find(target.organizationId);
      expect(after?.webhookUrl).toBe(before?.webhookUrl);
      expect(after?.webhookSecretSealed).toBe(before?.webhookSecretSealed);
      const res = await t.request('PUT', '/api/v1/webhook', { key: target.apiKey, body: { webhookUrl: null } });
      expect(res.status).toBe(200);
      expect((await res.json()).webhookSecret).toBe(target.webhookSecret);
    });
  });
});
