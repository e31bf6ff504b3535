import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CaseRow } from '../../src/db/repos/index.js';
import { adminToken } from '../helpers/admin.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { addContent, license, registerOrg } from '../helpers/fixtures.js';
import { expectError } from '../helpers/expect-error.js';

// The abuse suite: what an attacker or a careless client sends, endpoint by endpoint. Every
// answer must be the spec's error body {error, code, status} with the right code, never a 500,
// and the server must keep serving. bad-input.test.ts holds the table of the platform endpoints
// (auth, plans, catalog, webhook, admin) with their field-by-field cases; this file walks the
// rest (streaming, viewers, forensics, the operator's cases, the players' capability URLs) through
// the same credential and body cases, and every endpoint through the cases that cut across them
// all: 1 MB strings, huge and negative numbers, huge pages, hostile ids, and a seeded fuzz pass.

type Json = Record<string, unknown>;

interface Fixture {
  org: Awaited<ReturnType<typeof registerOrg>>;
  /** keys that lack a scope: one holding only catalog, one holding only stream */
  catalogOnly: string;
  streamOnly: string;
  target: string;
  filmId: string;
  sessionId: string;
  viewerId: string;
  caseId: string;
  token: string;
}

type Scope = 'catalog' | 'stream' | 'billing' | 'forensics';

interface Endpoint {
  name: string;
  method: string;
  path: (f: Fixture, id?: string) => string;
  auth: 'key' | 'admin';
  scope?: Scope;
  /** reads a JSON body, whose string fields are these */
  fields?: string[];
  /** takes an id in its path (`path(f, id)` puts another one there) */
  id?: boolean;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: 'POST /stream/{contentId}',
    method: 'POST',
    path: (f, id = f.filmId) => `/api/v1/stream/${id}`,
    auth: 'key',
    scope: 'stream',
    fields: ['viewerToken', 'walletAddress', 'viewerId'],
    id: true,
  },
  {
    name: 'GET /stream/sessions/{id}',
    method: 'GET',
    path: (f, id = f.sessionId) => `/api/v1/stream/sessions/${id}`,
    auth: 'key',
    scope: 'stream',
    id: true,
  },
  {
    name: 'DELETE /stream/sessions/{id} (A)',
    method: 'DELETE',
    path: (_, id = randomUUID()) => `/api/v1/stream/sessions/${id}`,
    auth: 'key',
    scope: 'stream',
    id: true,
  },
  {
    name: 'DELETE /stream/{id} (B)',
    method: 'DELETE',
    path: (_, id = randomUUID()) => `/api/v1/stream/${id}`,
    auth: 'key',
    scope: 'stream',
    id: true,
  },
  { name: 'GET /viewers', method: 'GET', path: () => '/api/v1/viewers', auth: 'key', scope: 'stream' },
  {
    name: 'GET /viewers/{id}',
    method: 'GET',
    path: (f, id = f.viewerId) => `/api/v1/viewers/${id}`,
    auth: 'key',
    scope: 'stream',
    id: true,
  },
  {
    name: 'POST /viewers/{id}/block',
    method: 'POST',
    path: (f, id = f.viewerId) => `/api/v1/viewers/${id}/block`,
    auth: 'key',
    scope: 'stream',
    fields: ['reason'],
    id: true,
  },
  {
    name: 'POST /viewers/{id}/unblock',
    method: 'POST',
    path: (f, id = f.viewerId) => `/api/v1/viewers/${id}/unblock`,
    auth: 'key',
    scope: 'stream',
    id: true,
  },
  {
    name: 'GET /viewers/search',
    method: 'GET',
    path: () => `/api/v1/viewers/search?binaryId=${'01'.repeat(20)}`,
    auth: 'key',
    scope: 'forensics',
  },
  {
    name: 'POST /forensics/analyze',
    method: 'POST',
    path: () => '/api/v1/forensics/analyze',
    auth: 'key',
    scope: 'forensics',
  },
  {
    name: 'GET /forensics/cases',
    method: 'GET',
    path: () => '/api/v1/forensics/cases',
    auth: 'key',
    scope: 'forensics',
  },
  {
    name: 'GET /forensics/cases/{id}',
    method: 'GET',
    path: (f, id = f.caseId) => `/api/v1/forensics/cases/${id}`,
    auth: 'key',
    scope: 'forensics',
    id: true,
  },
  {
    name: 'GET /forensics/cases/{id}/report',
    method: 'GET',
    path: (f, id = f.caseId) => `/api/v1/forensics/cases/${id}/report`,
    auth: 'key',
    scope: 'forensics',
    id: true,
  },
  { name: 'GET /billing/usage', method: 'GET', path: () => '/api/v1/billing/usage', auth: 'key', scope: 'billing' },
  { name: 'GET /billing/balance', method: 'GET', path: () => '/api/v1/billing/balance', auth: 'key', scope: 'billing' },
  {
    name: 'GET /billing/invoices',
    method: 'GET',
    path: () => '/api/v1/billing/invoices',
    auth: 'key',
    scope: 'billing',
  },
  {
    name: 'GET /billing/invoices/upcoming',
    method: 'GET',
    path: () => '/api/v1/billing/invoices/upcoming',
    auth: 'key',
    scope: 'billing',
  },
  {
    name: 'GET /billing/invoices/{id}',
    method: 'GET',
    path: (_, id = randomUUID()) => `/api/v1/billing/invoices/${id}`,
    auth: 'key',
    scope: 'billing',
    id: true,
  },
  {
    name: 'POST /billing/invoices/{id}/pay',
    method: 'POST',
    path: (_, id = randomUUID()) => `/api/v1/billing/invoices/${id}/pay`,
    auth: 'key',
    scope: 'billing',
    id: true,
  },
  {
    name: 'POST /billing/fund',
    method: 'POST',
    path: () => '/api/v1/billing/fund',
    auth: 'key',
    scope: 'billing',
    fields: ['method', 'paymentIntentId'],
  },
  {
    name: 'PUT /billing/autopay (A)',
    method: 'PUT',
    path: () => '/api/v1/billing/autopay',
    auth: 'key',
    scope: 'billing',
    fields: ['method', 'customerId'],
  },
  {
    name: 'POST /billing/autopay (B)',
    method: 'POST',
    path: () => '/api/v1/billing/autopay',
    auth: 'key',
    scope: 'billing',
    fields: ['method', 'customerId'],
  },
  {
    name: 'GET /billing/subscriptions',
    method: 'GET',
    path: () => '/api/v1/billing/subscriptions',
    auth: 'key',
    scope: 'billing',
  },
  {
    name: 'POST /billing/subscriptions',
    method: 'POST',
    path: () => '/api/v1/billing/subscriptions',
    auth: 'key',
    scope: 'billing',
    fields: ['product', 'interval'],
  },
  {
    name: 'DELETE /billing/subscriptions/{id}',
    method: 'DELETE',
    path: (_, id = randomUUID()) => `/api/v1/billing/subscriptions/${id}`,
    auth: 'key',
    scope: 'billing',
    id: true,
  },
  {
    name: 'POST /admin/organizations/{id}/credit',
    method: 'POST',
    path: (f, id = f.target) => `/api/v1/admin/organizations/${id}/credit`,
    auth: 'admin',
    id: true,
  },
  {
    name: 'POST /admin/organizations/{id}/plan',
    method: 'POST',
    path: (f, id = f.target) => `/api/v1/admin/organizations/${id}/plan`,
    auth: 'admin',
    id: true,
  },
  {
    name: 'POST /admin/organizations/{id}/watermark-pass',
    method: 'POST',
    path: (f, id = f.target) => `/api/v1/admin/organizations/${id}/watermark-pass`,
    auth: 'admin',
    id: true,
  },
  {
    name: 'GET /admin/organizations/{id}/billing',
    method: 'GET',
    path: (f, id = f.target) => `/api/v1/admin/organizations/${id}/billing`,
    auth: 'admin',
    id: true,
  },
  {
    name: 'POST /admin/billing/close-period',
    method: 'POST',
    path: () => '/api/v1/admin/billing/close-period',
    auth: 'admin',
  },
  { name: 'GET /admin/billing/deposits', method: 'GET', path: () => '/api/v1/admin/billing/deposits', auth: 'admin' },
  { name: 'GET /admin/overview', method: 'GET', path: () => '/api/v1/admin/overview', auth: 'admin' },
  { name: 'GET /admin/content', method: 'GET', path: () => '/api/v1/admin/content', auth: 'admin' },
  {
    name: 'GET /admin/content/{id}',
    method: 'GET',
    path: (f, id = f.filmId) => `/api/v1/admin/content/${id}`,
    auth: 'admin',
    id: true,
  },
  {
    name: 'DELETE /admin/content/{id}',
    method: 'DELETE',
    path: (_, id = randomUUID()) => `/api/v1/admin/content/${id}`,
    auth: 'admin',
    id: true,
  },
  { name: 'GET /admin/forensics/cases', method: 'GET', path: () => '/api/v1/admin/forensics/cases', auth: 'admin' },
  {
    name: 'GET /admin/forensics/cases/{id}',
    method: 'GET',
    path: (f, id = f.caseId) => `/api/v1/admin/forensics/cases/${id}`,
    auth: 'admin',
    id: true,
  },
];

/** Every JSON body the API reads, with its fields (strings unless listed in NUMBERS): the fuzz pass and the 1 MB strings walk them all. */
const BODIES: Array<{
  name: string;
  method: string;
  path: (f: Fixture) => string;
  auth: 'none' | 'key' | 'admin';
  fields: string[];
}> = [
  {
    name: 'POST /auth/register',
    method: 'POST',
    path: () => '/api/v1/auth/register',
    auth: 'none',
    fields: ['name', 'email', 'walletAddress', 'signingPublicKey', 'signingAlgorithm', 'webhookUrl', 'plan'],
  },
  { name: 'PUT /webhook', method: 'PUT', path: () => '/api/v1/webhook', auth: 'key', fields: ['webhookUrl'] },
  {
    name: 'POST /admin/auth/verify',
    method: 'POST',
    path: () => '/api/v1/admin/auth/verify',
    auth: 'none',
    fields: ['message', 'signature'],
  },
  {
    name: 'POST /admin/organizations/{id}/license',
    method: 'POST',
    path: (f) => `/api/v1/admin/organizations/${f.target}/license`,
    auth: 'admin',
    fields: ['contentId', 'contentType', 'licenseScope'],
  },
  {
    name: 'POST /admin/organizations/{id}/rate-limit',
    method: 'POST',
    path: (f) => `/api/v1/admin/organizations/${f.target}/rate-limit`,
    auth: 'admin',
    fields: ['keyId'],
  },
  {
    name: 'POST /admin/organizations/{id}/suspend',
    method: 'POST',
    path: (f) => `/api/v1/admin/organizations/${f.target}/suspend`,
    auth: 'admin',
    fields: ['reason'],
  },
  {
    name: 'POST /admin/organizations/{id}/credit',
    method: 'POST',
    path: (f) => `/api/v1/admin/organizations/${f.target}/credit`,
    auth: 'admin',
    fields: ['idempotencyKey', 'reason'],
  },
  {
    name: 'POST /admin/organizations/{id}/plan',
    method: 'POST',
    path: (f) => `/api/v1/admin/organizations/${f.target}/plan`,
    auth: 'admin',
    fields: ['plan'],
  },
  {
    name: 'POST /admin/organizations/{id}/watermark-pass',
    method: 'POST',
    path: (f) => `/api/v1/admin/organizations/${f.target}/watermark-pass`,
    auth: 'admin',
    fields: ['until'],
  },
  {
    name: 'POST /admin/billing/close-period',
    method: 'POST',
    path: () => '/api/v1/admin/billing/close-period',
    auth: 'admin',
    fields: ['period'],
  },
  ...ENDPOINTS.filter((e) => e.fields).map((e) => ({
    name: e.name,
    method: e.method,
    path: (f: Fixture) => e.path(f),
    auth: e.auth,
    fields: e.fields as string[],
  })),
];

/** Number fields with a body that is valid around them, and the values each must refuse (huge, negative; fractions where counts are whole). */
// Written as JSON number literals: 9007199254740993 is not a number JavaScript can hold.
const HUGE_AND_NEGATIVE = ['1e308', '1e21', '9007199254740993', '-1', '-1e308'];
const NUMBERS: Array<[endpoint: string, field: string, rest: Json, refused: string[]]> = [
  ['POST /admin/organizations/{id}/rate-limit', 'rateLimitPerHour', {}, [...HUGE_AND_NEGATIVE, '0.5']],
  ['POST /admin/organizations/{id}/rate-limit', 'monthlyStreamLimit', {}, [...HUGE_AND_NEGATIVE, '0.5']],
  [
    'POST /admin/organizations/{id}/license',
    'pricePerStream',
    { contentId: '*', contentType: 'video' },
    HUGE_AND_NEGATIVE,
  ],
  // money: above 0, at most 1,000,000, at most 6 decimals
  [
    'POST /billing/fund',
    'amount',
    { method: 'apusd' },
    [...HUGE_AND_NEGATIVE, '0', '1000000.01', '0.0000001', '4e-10', '1.005'],
  ],
  [
    'POST /admin/organizations/{id}/credit',
    'amount',
    {},
    [...HUGE_AND_NEGATIVE, '0', '1000000.01', '0.0000001', '4e-10'],
  ],
  ['POST /admin/organizations/{id}/watermark-pass', 'days', {}, [...HUGE_AND_NEGATIVE, '0', '0.5']],
];

/** Every list the API serves. */
const LISTS: Array<[path: string, auth: 'key' | 'admin']> = [
  ['/api/v1/catalog', 'key'],
  ['/api/v1/viewers', 'key'],
  ['/api/v1/webhook/deliveries', 'key'],
  ['/api/v1/billing/invoices', 'key'],
  ['/api/v1/forensics/cases', 'key'],
  ['/api/v1/admin/organizations', 'admin'],
  ['/api/v1/admin/content', 'admin'],
  ['/api/v1/admin/forensics/cases', 'admin'],
];
const HUGE_PAGES = [
  'page=1e15',
  'page=1e21',
  'page=9007199254740993',
  'page=-1',
  'page=0',
  'page=abc',
  'page=1.5',
  'page=',
  'limit=1e21',
  'limit=-5',
];

const HOSTILE_IDS = [
  randomUUID(),
  'not-a-uuid',
  '%E0%A4%A',
  'x'.repeat(300),
  "'%20or%201=1%20--",
  '..%2F..%2Fetc%2Fpasswd',
  '00000000-0000-0000-0000-000000000000',
];

const MB_STRING = 'x'.repeat(1_000_000);

describe.each(DIALECTS)('abuse on %s', (dialect) => {
  let t: TestApp;
  let f: Fixture;

  beforeAll(async () => {
    t = await makeTestApp(dialect);
    const org = await registerOrg(t);
    // Thousands of requests come from this one organization: the hourly limit is not what is tested here.
    await t.ctx.repos.organizations.update(org.organizationId, { rateLimitPerHour: 1_000_000 });
    // A packaged stream is not needed: sessions are made, never played, here.
    const film = await addContent(t, { storagePath: 'not-packaged' });
    await license(t, org.organizationId, film.id);
    const session = (await (
      await t.request('POST', `/api/v1/stream/${film.id}`, { key: org.apiKey, body: { viewerId: 'abuse-viewer' } })
    ).json()) as Json;
    const caseRow: CaseRow = {
      ...{
        id: randomUUID(),
        organizationId: org.organizationId,
        apiKeyId: null,
        contentId: film.id,
        contentType: 'video',
        status: 'failed',
      },
      ...{
        failureReason: 'fixture',
        uploadPath: null,
        uploadName: null,
        uploadBytes: null,
        attempts: 1,
        leaseUntil: null,
        leasedBy: null,
        classification: null,
      },
      ...{
        binaryId: null,
        supportedBits: null,
        matchedViewerId: null,
        matchedSessionId: null,
        report: null,
        progress: null,
        leakFrames: null,
        createdAt: t.clock.now(),
        completedAt: t.clock.now(),
      },
    };
    await t.ctx.repos.forensicCases.insert(caseRow);
    f = {
      org,
      catalogOnly: (await registerOrg(t, { name: 'Catalog Only', scopes: ['catalog'] })).apiKey,
      streamOnly: (await registerOrg(t, { name: 'Stream Only', scopes: ['stream'] })).apiKey,
      target: (await registerOrg(t, { name: 'Target' })).organizationId,
      filmId: film.id,
      sessionId: session.sessionId as string,
      viewerId: session.viewerId as string,
      caseId: caseRow.id,
      token: await adminToken(t),
    };
  });
  afterAll(() => t.close());

  const credentials = (auth: 'none' | 'key' | 'admin') =>
    auth === 'key' ? f.org.apiKey : auth === 'admin' ? f.token : undefined;

  /** The server answers as before: health, and the organization's key. */
  async function expectStillServing() {
    expect((await t.request('GET', '/health')).status).toBe(200);
    expect((await t.request('GET', '/api/v1/auth/verify', { key: f.org.apiKey })).status).toBe(200);
  }

  const keyed = ENDPOINTS.filter((e) => e.auth === 'key');
  const json = ENDPOINTS.filter((e) => e.fields);
  const rows = (list: Endpoint[]) => list.map((e) => [e.name, e] as const);

  describe('credentials', () => {
    afterAll(() => expectStillServing());

    it.each(rows(keyed))('%s without a key, with a wrong or malformed key is 401 INVALID_API_KEY', async (_, e) => {
      for (const authorization of [
        undefined,
        `Bearer drm_live_${'A'.repeat(40)}`,
        'Bearer nonsense',
        `Basic ${f.org.apiKey}`,
        `Bearer ${f.token}`,
      ]) {
        const headers: Record<string, string> = authorization ? { authorization } : {};
        await expectError(
          await t.request(e.method, e.path(f), { headers, body: e.fields ? {} : undefined }),
          401,
          'INVALID_API_KEY',
        );
      }
    });

    it.each(rows(keyed))('%s with a key lacking its scope is 403 INSUFFICIENT_SCOPE', async (_, e) => {
      const key = e.scope === 'stream' ? f.catalogOnly : f.streamOnly;
      await expectError(
        await t.request(e.method, e.path(f), { key, body: e.fields ? {} : undefined }),
        403,
        'INSUFFICIENT_SCOPE',
      );
    });

    it.each(rows(ENDPOINTS.filter((e) => e.auth === 'admin')))(
      '%s without an admin token, or with an API key, is 401 INVALID_ADMIN_TOKEN',
      async (_, e) => {
        for (const key of [undefined, f.org.apiKey, 'a.b.c']) {
          await expectError(await t.request(e.method, e.path(f), { key }), 401, 'INVALID_ADMIN_TOKEN');
        }
      },
    );
  });

  describe('bodies', () => {
    afterAll(() => expectStillServing());

    it.each(rows(json))('%s with malformed JSON, or JSON that is not an object, is 400 BAD_REQUEST', async (_, e) => {
      for (const body of ['{bad', '{"a":', "{'a': 1}", '[]', '"text"', '42', 'true']) {
        await expectError(await t.request(e.method, e.path(f), { key: f.org.apiKey, body }), 400, 'BAD_REQUEST');
      }
    });

    it.each(rows(json))('%s with a field of the wrong type is 400 BAD_REQUEST', async (_, e) => {
      for (const field of e.fields as string[]) {
        for (const value of [42, true, [], { nested: 'x' }]) {
          await expectError(
            await t.request(e.method, e.path(f), { key: f.org.apiKey, body: { [field]: value } }),
            400,
            'BAD_REQUEST',
          );
        }
      }
    });

    it.each(rows(ENDPOINTS.filter((e) => e.method !== 'GET' && e.name !== 'POST /forensics/analyze')))(
      '%s with a body over 1 MiB is 413 PAYLOAD_TOO_LARGE',
      async (_, e) => {
        const body = JSON.stringify({ pad: 'a'.repeat(1024 * 1024) });
        await expectError(
          await t.request(e.method, e.path(f), {
            key: f.org.apiKey,
            body,
            headers: { 'content-length': String(body.length) },
          }),
          413,
          'PAYLOAD_TOO_LARGE',
        );
      },
    );

    it.each(BODIES.map((b) => [b.name, b] as const))(
      '%s with a 1 MB string in any field is 400 BAD_REQUEST',
      async (_, b) => {
        for (const field of b.fields) {
          await expectError(
            await t.request(b.method, b.path(f), { key: credentials(b.auth), body: { [field]: MB_STRING } }),
            400,
            'BAD_REQUEST',
          );
        }
      },
    );

    it.each(NUMBERS)(
      '%s with %s huge, negative (or a fraction of a count) is 400 BAD_REQUEST',
      async (name, field, rest, refused) => {
        const b = BODIES.find((x) => x.name === name) as (typeof BODIES)[number];
        for (const value of refused) {
          const body = JSON.stringify({ ...rest, [field]: 0 }).replace(`"${field}":0`, `"${field}":${value}`);
          await expectError(
            await t.request(b.method, b.path(f), { key: credentials(b.auth), body }),
            400,
            'BAD_REQUEST',
          );
        }
      },
    );

    it('POST /forensics/analyze with a body that is not a form with a file, or a hostile contentId, is refused (400 or 404)', async () => {
      const form = (fields: Json, file = true) => {
        const data = new FormData();
        for (const [k, v] of Object.entries(fields)) data.set(k, String(v));
        if (file) data.set('file', new Blob([Buffer.alloc(2048, 7)]), 'leak.mp4');
        return data;
      };
      const send = (body: FormData | string) =>
        Promise.resolve(
          t.app.request('/api/v1/forensics/analyze', {
            method: 'POST',
            headers: { authorization: `Bearer ${f.org.apiKey}` },
            body,
          }),
        );
      await expectError(await send('{"contentId": 1}'), 400, 'BAD_REQUEST');
      await expectError(await send(form({ contentId: f.filmId, contentType: 'video' }, false)), 400, 'BAD_REQUEST');
      await expectError(await send(form({ contentType: 'video' })), 400, 'BAD_REQUEST');
      await expectError(await send(form({ contentId: f.filmId, contentType: 'film' })), 400, 'BAD_REQUEST');
      for (const contentId of HOSTILE_IDS)
        await expectError(await send(form({ contentId, contentType: 'video' })), 404, 'NOT_FOUND');
      await expectError(await send(form({ contentId: MB_STRING.slice(0, 100_000), contentType: 'video' })), [400, 404]);
    });
  });

  describe('pages and ids', () => {
    afterAll(() => expectStillServing());

    it.each(LISTS)('%s with a huge, negative or malformed page or limit is 400 BAD_REQUEST', async (path, auth) => {
      for (const query of HUGE_PAGES) {
        await expectError(await t.request('GET', `${path}?${query}`, { key: credentials(auth) }), 400, 'BAD_REQUEST');
      }
      const last = await t.request('GET', `${path}?page=1000000&limit=100`, { key: credentials(auth) });
      expect(last.status).toBe(200);
    });

    it.each(rows(ENDPOINTS.filter((e) => e.id)))(
      '%s with an unknown, malformed or hostile id is 404 (400 where the form is wrong)',
      async (_, e) => {
        for (const id of HOSTILE_IDS) {
          const res = await t.request(e.method, e.path(f, id), {
            key: credentials(e.auth),
            body: e.fields ? {} : undefined,
          });
          await expectError(res, [400, 404]);
        }
      },
    );

    it('the viewer search with a binaryId that is not 40 bits is 400 BAD_REQUEST', async () => {
      for (const q of [
        '',
        'binaryId=',
        `binaryId=${'2'.repeat(40)}`,
        `binaryId=${'0'.repeat(39)}`,
        `binaryId=${'0'.repeat(100_000)}`,
      ]) {
        await expectError(
          await t.request('GET', `/api/v1/viewers/search?${q}`, { key: f.org.apiKey }),
          400,
          'BAD_REQUEST',
        );
      }
    });

    it("the players' playlist, key and segment refuse a missing, unknown or hostile session, and a bad segment number", async () => {
      const base = `/api/v1/stream/${f.filmId}`;
      for (const what of ['playlist', 'key', 'segment/0.ts']) {
        await expectError(await t.request('GET', `${base}/${what}`), 400, 'BAD_REQUEST');
        for (const session of HOSTILE_IDS)
          await expectError(await t.request('GET', `${base}/${what}?session=${session}`), [400, 404]);
        await expectError(
          await t.request('GET', `/api/v1/stream/${randomUUID()}/${what}?session=${f.sessionId}`),
          404,
          'NOT_FOUND',
        );
      }
      for (const seg of ['x', '-1', '1e3', '99999999999', '0.mp4', '0.ts.ts', '%00']) {
        await expectError(await t.request('GET', `${base}/segment/${seg}?session=${f.sessionId}`), [400, 404]);
      }
    });
  });

  describe('fuzzing the JSON bodies (fast-check, seeded)', () => {
    afterAll(() => expectStillServing());

    const leaf = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.string({ unit: 'binary', maxLength: 20 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.uuid(),
      fc.constantFrom(
        '*',
        'video',
        'music',
        'all',
        'specific',
        'RS256',
        'ES256',
        'professional',
        'paid',
        'http://93.184.215.14/hook',
        '0x' + 'ab'.repeat(20),
        '',
      ),
    );
    const value = fc.oneof(
      leaf,
      fc.array(leaf, { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 6 }), leaf, { maxKeys: 3 }),
    );

    it.each(BODIES.map((b) => [b.name, b] as const))(
      '%s: 200 random bodies, none answered with a 500 or a body outside the spec',
      async (_, b) => {
        const fields = fc.record(
          Object.fromEntries(
            [
              ...b.fields,
              'rateLimitPerHour',
              'monthlyStreamLimit',
              'pricePerStream',
              'scopes',
              'watermarkingEnabled',
              'regenerateSecret',
              'amount',
              'enabled',
              'days',
              'terms',
            ].map((k) => [k, value]),
          ),
          { requiredKeys: [] },
        );
        const body = fc.oneof({ weight: 4, arbitrary: fields }, { weight: 1, arbitrary: fc.jsonValue() });
        await fc.assert(
          fc.asyncProperty(body, async (sent) => {
            const res = await t.request(b.method, b.path(f), { key: credentials(b.auth), body: JSON.stringify(sent) });
            if (res.status >= 500)
              throw new Error(`${res.status} for ${JSON.stringify(sent).slice(0, 300)}: ${await res.text()}`);
            if (res.status >= 400) await expectError(res, res.status);
          }),
          { seed: 42, numRuns: 200 },
        );
      },
    );
  });
});
