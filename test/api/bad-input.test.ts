import { randomUUID } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/crypto/tokens.js';
import type { ContentRow } from '../../src/db/repos/index.js';
import { adminToken, newAccount, siweMessage } from '../helpers/admin.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { addContent, license, registerOrg } from '../helpers/fixtures.js';
import { expectError } from '../helpers/expect-error.js';

// A table-driven matrix of bad requests over every endpoint served so far: each must answer with
// the spec's error body {error, code, status} (status equal to the HTTP status), never a 500, and
// leave nothing half-written behind.

const MIB = 1024 * 1024;

type Registration = Awaited<ReturnType<typeof registerOrg>>;

/** What the endpoints' paths and credentials are built from (made once per dialect). */
interface Fixture {
  /** an organization with all four scopes; its key must never be rotated by these tests */
  org: Registration;
  /** an organization whose key has only the stream scope */
  streamOnly: Registration;
  /** the organization the admin endpoints act on */
  target: Registration;
  film: ContentRow;
  song: ContentRow;
  token: string;
}

type Auth = 'none' | 'key' | 'admin';

interface Endpoint {
  name: string;
  method: string;
  path: (f: Fixture) => string;
  auth: Auth;
  /** the scope a key needs; 'any' for verify and rotate */
  scope?: 'catalog' | 'stream' | 'billing' | 'forensics' | 'any';
  /** reads a JSON body */
  json?: boolean;
}

const org = (sub: string) => (f: Fixture) => `/api/v1/admin/organizations/${f.target.organizationId}/${sub}`;
const fixed = (path: string) => () => path;

const ENDPOINTS: Endpoint[] = [
  {
    name: 'POST /api/v1/auth/register',
    method: 'POST',
    path: fixed('/api/v1/auth/register'),
    auth: 'none',
    json: true,
  },
  { name: 'GET /api/v1/auth/verify', method: 'GET', path: fixed('/api/v1/auth/verify'), auth: 'key', scope: 'any' },
  { name: 'POST /api/v1/auth/rotate', method: 'POST', path: fixed('/api/v1/auth/rotate'), auth: 'key', scope: 'any' },
  { name: 'GET /api/v1/billing/plans', method: 'GET', path: fixed('/api/v1/billing/plans'), auth: 'none' },
  { name: 'GET /api/v1/catalog', method: 'GET', path: fixed('/api/v1/catalog'), auth: 'key', scope: 'catalog' },
  {
    name: 'GET /api/v1/catalog/{id}',
    method: 'GET',
    path: (f) => `/api/v1/catalog/${f.film.id}`,
    auth: 'key',
    scope: 'catalog',
  },
  {
    name: 'PUT /api/v1/webhook',
    method: 'PUT',
    path: fixed('/api/v1/webhook'),
    auth: 'key',
    scope: 'billing',
    json: true,
  },
  {
    name: 'GET /api/v1/webhook/deliveries',
    method: 'GET',
    path: fixed('/api/v1/webhook/deliveries'),
    auth: 'key',
    scope: 'billing',
  },
  {
    name: 'POST /api/v1/webhook/test',
    method: 'POST',
    path: fixed('/api/v1/webhook/test'),
    auth: 'key',
    scope: 'billing',
  },
  { name: 'GET /api/v1/admin/auth/nonce', method: 'GET', path: fixed('/api/v1/admin/auth/nonce'), auth: 'none' },
  {
    name: 'POST /api/v1/admin/auth/verify',
    method: 'POST',
    path: fixed('/api/v1/admin/auth/verify'),
    auth: 'none',
    json: true,
  },
  { name: 'GET /api/v1/admin/organizations', method: 'GET', path: fixed('/api/v1/admin/organizations'), auth: 'admin' },
  {
    name: 'POST /api/v1/admin/organizations/{id}/license',
    method: 'POST',
    path: org('license'),
    auth: 'admin',
    json: true,
  },
  {
    name: 'POST /api/v1/admin/organizations/{id}/rate-limit',
    method: 'POST',
    path: org('rate-limit'),
    auth: 'admin',
    json: true,
  },
  {
    name: 'POST /api/v1/admin/organizations/{id}/suspend',
    method: 'POST',
    path: org('suspend'),
    auth: 'admin',
    json: true,
  },
  { name: 'POST /api/v1/admin/organizations/{id}/reactivate', method: 'POST', path: org('reactivate'), auth: 'admin' },
];

const byName = (name: string): Endpoint => {
  const e = ENDPOINTS.find((x) => x.name === name);
  if (!e) throw new Error(`no endpoint ${name}`);
  return e;
};
const keyed = ENDPOINTS.filter((e) => e.auth === 'key');
const scoped = keyed.filter((e) => e.scope !== 'any');
const admin = ENDPOINTS.filter((e) => e.auth === 'admin');
const jsonBodies = ENDPOINTS.filter((e) => e.json);
const withBody = ENDPOINTS.filter((e) => e.method !== 'GET');

/** Wrong field types and invalid values, per endpoint that reads a body: all 400 BAD_REQUEST. */
const INVALID_FIELDS: Array<[endpoint: string, what: string, body: (f: Fixture) => unknown]> = [
  ['POST /api/v1/auth/register', 'no name', () => ({ email: 'a@b.test' })],
  ['POST /api/v1/auth/register', 'name: 42', () => ({ name: 42 })],
  ['POST /api/v1/auth/register', 'an empty name', () => ({ name: '   ' })],
  ['POST /api/v1/auth/register', 'a name of 201 characters', () => ({ name: 'n'.repeat(201) })],
  ['POST /api/v1/auth/register', 'email: 5', () => ({ name: 'X', email: 5 })],
  ['POST /api/v1/auth/register', 'an email without @', () => ({ name: 'X', email: 'nobody' })],
  ['POST /api/v1/auth/register', 'walletAddress: true', () => ({ name: 'X', walletAddress: true })],
  ['POST /api/v1/auth/register', 'a walletAddress that is no address', () => ({ name: 'X', walletAddress: '0x123' })],
  ['POST /api/v1/auth/register', 'signingAlgorithm HS256', () => ({ name: 'X', signingAlgorithm: 'HS256' })],
  ['POST /api/v1/auth/register', 'signingAlgorithm: 256', () => ({ name: 'X', signingAlgorithm: 256 })],
  [
    'POST /api/v1/auth/register',
    'a signingPublicKey that is no PEM',
    () => ({ name: 'X', signingPublicKey: 'not a key' }),
  ],
  ['POST /api/v1/auth/register', 'signingPublicKey: {}', () => ({ name: 'X', signingPublicKey: {} })],
  ['POST /api/v1/auth/register', 'webhookUrl: 5', () => ({ name: 'X', webhookUrl: 5 })],
  ['POST /api/v1/auth/register', 'a webhookUrl that is no URL', () => ({ name: 'X', webhookUrl: 'not a url' })],
  ['POST /api/v1/auth/register', 'an ftp webhookUrl', () => ({ name: 'X', webhookUrl: 'ftp://93.184.215.14/x' })],
  ['POST /api/v1/auth/register', 'a loopback webhookUrl', () => ({ name: 'X', webhookUrl: 'http://127.0.0.1/hook' })],
  ['POST /api/v1/auth/register', 'an admin-only plan', () => ({ name: 'X', plan: 'white-label' })],
  ['POST /api/v1/auth/register', 'an unknown plan', () => ({ name: 'X', plan: 'free' })],
  ['POST /api/v1/auth/register', 'plan: 1', () => ({ name: 'X', plan: 1 })],
  ['POST /api/v1/auth/register', "scopes: 'catalog'", () => ({ name: 'X', scopes: 'catalog' })],
  ['POST /api/v1/auth/register', 'an unknown scope', () => ({ name: 'X', scopes: ['catalog', 'admin'] })],
  ['POST /api/v1/auth/register', 'no scopes', () => ({ name: 'X', scopes: [] })],
  ['PUT /api/v1/webhook', 'an empty body', () => ({})],
  ['PUT /api/v1/webhook', 'webhookUrl: 5', () => ({ webhookUrl: 5 })],
  ['PUT /api/v1/webhook', "regenerateSecret: 'yes'", () => ({ regenerateSecret: 'yes' })],
  ['PUT /api/v1/webhook', 'regenerateSecret: 1', () => ({ regenerateSecret: 1 })],
  ['PUT /api/v1/webhook', 'a webhookUrl that is no URL', () => ({ webhookUrl: 'hook' })],
  ['PUT /api/v1/webhook', 'a javascript: webhookUrl', () => ({ webhookUrl: 'javascript:alert(1)' })],
  ['PUT /api/v1/webhook', 'a webhookUrl with credentials', () => ({ webhookUrl: 'https://u:p@93.184.215.14/' })],
  ['PUT /api/v1/webhook', 'a private webhookUrl', () => ({ webhookUrl: 'http://10.0.0.5/hook' })],
  ['PUT /api/v1/webhook', 'webhookUrl: []', () => ({ webhookUrl: [] })],
  ['POST /api/v1/admin/auth/verify', 'an empty body', () => ({})],
  ['POST /api/v1/admin/auth/verify', 'message: 42', () => ({ message: 42, signature: '0x00' })],
  ['POST /api/v1/admin/auth/verify', 'signature: 42', () => ({ message: 'hello', signature: 42 })],
  [
    'POST /api/v1/admin/auth/verify',
    'a message that is no SIWE message',
    () => ({ message: 'hello', signature: '0xabcd' }),
  ],
  ['POST /api/v1/admin/auth/verify', 'a signature that is not hex', () => ({ message: 'hello', signature: 'zz' })],
  ['POST /api/v1/admin/organizations/{id}/license', 'an empty body', () => ({})],
  ['POST /api/v1/admin/organizations/{id}/license', 'contentId: 42', () => ({ contentId: 42, contentType: 'video' })],
  [
    'POST /api/v1/admin/organizations/{id}/license',
    'contentId that is no UUID',
    () => ({ contentId: 'abc', contentType: 'video' }),
  ],
  ['POST /api/v1/admin/organizations/{id}/license', 'no contentType', () => ({ contentId: '*' })],
  [
    'POST /api/v1/admin/organizations/{id}/license',
    'contentType film',
    () => ({ contentId: '*', contentType: 'film' }),
  ],
  ['POST /api/v1/admin/organizations/{id}/license', 'contentType: 1', () => ({ contentId: '*', contentType: 1 })],
  [
    'POST /api/v1/admin/organizations/{id}/license',
    'licenseScope specific with the wildcard',
    () => ({ contentId: '*', contentType: 'video', licenseScope: 'specific' }),
  ],
  [
    'POST /api/v1/admin/organizations/{id}/license',
    'licenseScope all with one content id',
    (f) => ({ contentId: f.film.id, contentType: 'video', licenseScope: 'all' }),
  ],
  [
    'POST /api/v1/admin/organizations/{id}/license',
    'an unknown licenseScope',
    () => ({ contentId: '*', contentType: 'video', licenseScope: 'some' }),
  ],
  [
    'POST /api/v1/admin/organizations/{id}/license',
    "watermarkingEnabled: 'yes'",
    () => ({ contentId: '*', contentType: 'video', watermarkingEnabled: 'yes' }),
  ],
  [
    'POST /api/v1/admin/organizations/{id}/license',
    "pricePerStream: 'free'",
    () => ({ contentId: '*', contentType: 'video', pricePerStream: 'free' }),
  ],
  [
    'POST /api/v1/admin/organizations/{id}/license',
    'a negative pricePerStream',
    () => ({ contentId: '*', contentType: 'video', pricePerStream: -1 }),
  ],
  [
    'POST /api/v1/admin/organizations/{id}/license',
    'a music id licensed as video',
    (f) => ({ contentId: f.song.id, contentType: 'video' }),
  ],
  ['POST /api/v1/admin/organizations/{id}/rate-limit', 'an empty body', () => ({})],
  ['POST /api/v1/admin/organizations/{id}/rate-limit', "rateLimitPerHour: '10'", () => ({ rateLimitPerHour: '10' })],
  ['POST /api/v1/admin/organizations/{id}/rate-limit', 'rateLimitPerHour: 0', () => ({ rateLimitPerHour: 0 })],
  ['POST /api/v1/admin/organizations/{id}/rate-limit', 'rateLimitPerHour: 1.5', () => ({ rateLimitPerHour: 1.5 })],
  ['POST /api/v1/admin/organizations/{id}/rate-limit', 'monthlyStreamLimit: -1', () => ({ monthlyStreamLimit: -1 })],
  [
    'POST /api/v1/admin/organizations/{id}/rate-limit',
    'monthlyStreamLimit: true',
    () => ({ monthlyStreamLimit: true }),
  ],
  ['POST /api/v1/admin/organizations/{id}/rate-limit', 'keyId: 5', () => ({ keyId: 5, rateLimitPerHour: 3 })],
  [
    'POST /api/v1/admin/organizations/{id}/rate-limit',
    'a keyId with monthlyStreamLimit',
    () => ({ keyId: randomUUID(), rateLimitPerHour: 3, monthlyStreamLimit: 3 }),
  ],
  [
    'POST /api/v1/admin/organizations/{id}/rate-limit',
    'a keyId without rateLimitPerHour',
    () => ({ keyId: randomUUID() }),
  ],
  ['POST /api/v1/admin/organizations/{id}/suspend', 'no reason', () => ({})],
  ['POST /api/v1/admin/organizations/{id}/suspend', 'reason: 42', () => ({ reason: 42 })],
  ['POST /api/v1/admin/organizations/{id}/suspend', 'an empty reason', () => ({ reason: '' })],
];

/** Query strings out of bounds: 400 BAD_REQUEST. */
const INVALID_QUERIES: Array<[endpoint: string, query: string]> = [
  ['GET /api/v1/catalog', 'limit=0'],
  ['GET /api/v1/catalog', 'limit=201'],
  ['GET /api/v1/catalog', 'page=abc'],
  ['GET /api/v1/webhook/deliveries', 'limit=101'],
  ['GET /api/v1/webhook/deliveries', 'page=0'],
  ['GET /api/v1/webhook/deliveries', 'limit=x'],
  ['GET /api/v1/admin/organizations', 'limit=501'],
  ['GET /api/v1/admin/organizations', 'page=-1'],
  ['GET /api/v1/admin/organizations', 'limit=2.5'],
];

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

describe.each(DIALECTS)('bad input on %s', (dialect) => {
  let t: TestApp;
  let f: Fixture;

  beforeAll(async () => {
    t = await makeTestApp(dialect);
    const orgReg = await registerOrg(t);
    const film = await addContent(t, { title: 'Licensed film' });
    const song = await addContent(t, { type: 'music', title: 'A song', resolution: null });
    await license(t, orgReg.organizationId, film.id);
    f = {
      org: orgReg,
      streamOnly: await registerOrg(t, { name: 'Stream Only', scopes: ['stream'] }),
      target: await registerOrg(t, { name: 'Target' }),
      film,
      song,
      token: await adminToken(t),
    };
  });
  afterAll(() => t.close());

  /** Credentials that an endpoint accepts (the full key or the admin token). */
  const credentials = (e: Endpoint): string | undefined =>
    e.auth === 'key' ? f.org.apiKey : e.auth === 'admin' ? f.token : undefined;

  const send = (
    e: Endpoint,
    init: { key?: string; body?: unknown; headers?: Record<string, string> } = {},
    query = '',
  ) => t.request(e.method, `${e.path(f)}${query}`, { key: credentials(e), ...init });

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

  const sendChunked = (e: Endpoint, text: string) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const key = credentials(e);
    if (key) headers.authorization = `Bearer ${key}`;
    // duplex 'half' is what Node's fetch needs for a stream body (absent from the RequestInit typings).
    const init: RequestInit & { duplex: 'half' } = { method: e.method, headers, body: chunked(text), duplex: 'half' };
    const req = new Request(`http://localhost${e.path(f)}`, init);
    expect(req.headers.get('content-length')).toBeNull();
    return t.app.request(req);
  };

  describe('missing or wrong credentials', () => {
    it.each(keyed.map((e) => [e.name, e] as const))('%s without a key is 401 INVALID_API_KEY', async (_, e) => {
      await expectError(await send(e, { key: undefined }), 401, 'INVALID_API_KEY');
    });

    it.each(keyed.map((e) => [e.name, e] as const))(
      '%s with a malformed, unknown or non-Bearer key is 401 INVALID_API_KEY',
      async (_, e) => {
        for (const headers of [
          { authorization: 'Bearer nonsense' },
          { authorization: `Bearer drm_live_${'0'.repeat(40)}` },
          { authorization: `Basic ${f.org.apiKey}` },
          { authorization: f.org.apiKey },
          { authorization: 'Bearer' },
          { authorization: `Bearer ${f.token}` },
        ]) {
          await expectError(await send(e, { key: undefined, headers }), 401, 'INVALID_API_KEY');
        }
      },
    );

    it.each(admin.map((e) => [e.name, e] as const))('%s without a token is 401 INVALID_ADMIN_TOKEN', async (_, e) => {
      await expectError(await send(e, { key: undefined }), 401, 'INVALID_ADMIN_TOKEN');
    });

    it.each(admin.map((e) => [e.name, e] as const))(
      '%s with a malformed, foreign or API-key token is 401 INVALID_ADMIN_TOKEN',
      async (_, e) => {
        const foreign = await new SignJWT({ role: 'admin' })
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject(newAccount().address.toLowerCase())
          .setIssuer('drm')
          .setAudience('drm-admin')
          .setExpirationTime(Math.floor(t.clock.now() / 1000) + 3600)
          .sign(new TextEncoder().encode('not the server secret, not at all'));
        for (const key of ['nonsense', 'a.b.c', f.org.apiKey, foreign]) {
          await expectError(await send(e, { key }), 401, 'INVALID_ADMIN_TOKEN');
        }
      },
    );

    it.each(admin.map((e) => [e.name, e] as const))(
      '%s with an expired token is 401 INVALID_ADMIN_TOKEN',
      async (_, e) => {
        const now = t.clock.now();
        const token = await adminToken(t);
        t.clock.advance(13 * 3_600_000);
        try {
          await expectError(await send(e, { key: token }), 401, 'INVALID_ADMIN_TOKEN');
        } finally {
          t.clock.set(now);
        }
      },
    );

    it.each(admin.map((e) => [e.name, e] as const))(
      '%s with the token of a wallet no longer granted is 403 ADMIN_REQUIRED',
      async (_, e) => {
        const account = newAccount();
        const token = await adminToken(t, account);
        await t.ctx.repos.admins.revoke(account.address.toLowerCase());
        await expectError(await send(e, { key: token }), 403, 'ADMIN_REQUIRED');
      },
    );

    it.each(scoped.map((e) => [e.name, e] as const))(
      '%s with a key lacking its scope is 403 INSUFFICIENT_SCOPE',
      async (_, e) => {
        await expectError(
          await send(e, { key: f.streamOnly.apiKey, body: e.json ? {} : undefined }),
          403,
          'INSUFFICIENT_SCOPE',
        );
      },
    );

    it('verify accepts a key of any scope', async () => {
      const res = await t.request('GET', '/api/v1/auth/verify', { key: f.streamOnly.apiKey });
      expect(res.status).toBe(200);
      expect((await res.json()).scopes).toEqual(['stream']);
    });

    it('a suspended organization is refused on every keyed endpoint with 403 ORGANIZATION_SUSPENDED', async () => {
      const suspended = await registerOrg(t, { name: 'Suspended' });
      const res = await t.request('POST', `/api/v1/admin/organizations/${suspended.organizationId}/suspend`, {
        key: f.token,
        body: { reason: 'unpaid invoices' },
      });
      expect(res.status).toBe(200);
      for (const e of keyed) {
        await expectError(
          await send(e, { key: suspended.apiKey, body: e.json ? {} : undefined }),
          403,
          'ORGANIZATION_SUSPENDED',
        );
      }
    });
  });

  describe('malformed bodies', () => {
    it.each(jsonBodies.map((e) => [e.name, e] as const))('%s with malformed JSON is 400 BAD_REQUEST', async (_, e) => {
      for (const body of MALFORMED_JSON) {
        await expectError(await send(e, { body }), 400, 'BAD_REQUEST');
      }
    });

    it.each(jsonBodies.map((e) => [e.name, e] as const))(
      '%s with JSON that is not an object is 400 BAD_REQUEST',
      async (_, e) => {
        for (const body of NOT_AN_OBJECT) {
          await expectError(await send(e, { body }), 400, 'BAD_REQUEST');
        }
      },
    );

    it.each(jsonBodies.map((e) => [e.name, e] as const))(
      '%s with an empty body or JSON null is 400 BAD_REQUEST',
      async (_, e) => {
        for (const body of ['', '   ', 'null']) {
          await expectError(await send(e, { body }), 400, 'BAD_REQUEST');
        }
        await expectError(await send(e), 400, 'BAD_REQUEST');
      },
    );

    it.each(INVALID_FIELDS.map(([name, what, body]) => [name, what, body] as const))(
      '%s with %s is 400 BAD_REQUEST',
      async (name, _, body) => {
        await expectError(await send(byName(name), { body: body(f) }), 400, 'BAD_REQUEST');
      },
    );

    it.each(INVALID_QUERIES)('%s with ?%s is 400 BAD_REQUEST', async (name, query) => {
      await expectError(await send(byName(name), {}, `?${query}`), 400, 'BAD_REQUEST');
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
    const cases: Array<[what: string, method: string, path: (f: Fixture) => string, body?: (f: Fixture) => unknown]> = [
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
        (x) => `/api/v1/admin/organizations/${x.target.organizationId}/license`,
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
        (x) => `/api/v1/admin/organizations/${x.target.organizationId}/rate-limit`,
        () => ({ rateLimitPerHour: 5, keyId: unknown }),
      ],
      [
        'a rate limit for a key id that is no UUID',
        'POST',
        (x) => `/api/v1/admin/organizations/${x.target.organizationId}/rate-limit`,
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
      const res = await t.request('POST', `/api/v1/admin/organizations/${f.target.organizationId}/rate-limit`, {
        key: f.token,
        body: { rateLimitPerHour: 5, keyId: found?.key.id },
      });
      await expectError(res, 404, 'NOT_FOUND');
      expect((await t.ctx.repos.apiKeys.find(found?.key.id as string))?.rateLimitPerHour).toBeNull();
    });
  });

  describe('oversized bodies', () => {
    it.each(withBody.map((e) => [e.name, e] as const))(
      '%s with a Content-Length over 1 MiB is 413 PAYLOAD_TOO_LARGE',
      async (_, e) => {
        const body = paddedJson(MIB + 1);
        const res = await send(e, { body, headers: { 'content-length': String(body.length) } });
        await expectError(res, 413, 'PAYLOAD_TOO_LARGE');
      },
    );

    it.each(jsonBodies.map((e) => [e.name, e] as const))(
      '%s with a chunked body over 1 MiB and no Content-Length is 413 PAYLOAD_TOO_LARGE',
      async (_, e) => {
        const res = await sendChunked(e, paddedJson(2 * MIB));
        await expectError(res, 413, 'PAYLOAD_TOO_LARGE');
      },
    );

    it('a body of exactly 1 MiB is read; one byte more is refused', async () => {
      const before = await t.ctx.repos.organizations.count();
      const register = byName('POST /api/v1/auth/register');
      expect((await sendChunked(register, paddedJson(MIB))).status).toBe(201);
      await expectError(await sendChunked(register, paddedJson(MIB + 1)), 413, 'PAYLOAD_TOO_LARGE');
      await expectError(await send(register, { body: paddedJson(MIB + 1) }), 413, 'PAYLOAD_TOO_LARGE');
      expect(await t.ctx.repos.organizations.count()).toBe(before + 1);
    });
  });

  describe('unknown routes and wrong methods', () => {
    const UNKNOWN: Array<[method: string, path: string, auth: Auth]> = [
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

    const WRONG_METHOD: Array<[method: string, endpoint: string]> = [
      ['GET', 'POST /api/v1/auth/register'],
      ['PUT', 'POST /api/v1/auth/register'],
      ['DELETE', 'GET /api/v1/auth/verify'],
      ['GET', 'POST /api/v1/auth/rotate'],
      ['POST', 'GET /api/v1/billing/plans'],
      ['POST', 'GET /api/v1/catalog'],
      ['DELETE', 'GET /api/v1/catalog/{id}'],
      ['POST', 'PUT /api/v1/webhook'],
      ['DELETE', 'PUT /api/v1/webhook'],
      ['POST', 'GET /api/v1/webhook/deliveries'],
      ['GET', 'POST /api/v1/webhook/test'],
      ['POST', 'GET /api/v1/admin/auth/nonce'],
      ['GET', 'POST /api/v1/admin/auth/verify'],
      ['DELETE', 'GET /api/v1/admin/organizations'],
      ['GET', 'POST /api/v1/admin/organizations/{id}/license'],
      ['PUT', 'POST /api/v1/admin/organizations/{id}/rate-limit'],
      ['DELETE', 'POST /api/v1/admin/organizations/{id}/suspend'],
      ['GET', 'POST /api/v1/admin/organizations/{id}/reactivate'],
    ];
    it.each(WRONG_METHOD)('%s on %s is 404 NOT_FOUND', async (method, name) => {
      const e = byName(name);
      await expectError(await t.request(method, e.path(f), { key: credentials(e) }), 404, 'NOT_FOUND');
    });

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
        await sendChunked(byName('POST /api/v1/auth/register'), paddedJson(2 * MIB)),
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
