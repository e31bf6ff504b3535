import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, newAccount } from '../helpers/admin.js';
import { type ApiFixture, type SendInit, sendTo, useApiFixture } from '../helpers/api-fixture.js';
import { DIALECTS, type TestApp } from '../helpers/context.js';
import { expectError } from '../helpers/expect-error.js';
import { API_ENDPOINTS, type ApiEndpoint, endpointNamed } from '../helpers/openapi-endpoints.js';

// The abuse suite: what an attacker or a careless client sends, to every endpoint the OpenAPI
// description names (test/helpers/openapi-endpoints.ts reads from it who may call each, with
// which scope, its string and number fields, its ids and its lists): missing, wrong, foreign,
// expired and suspended credentials, 1 MB strings, huge and negative numbers, huge pages, hostile
// ids and idempotency keys, and a seeded fuzz pass over every JSON body. Every answer must be the
// spec's error body {error, code, status} with the right code, never a 500, and the server must
// keep serving. The form of a request (malformed JSON, fields of the wrong type or value,
// oversized bodies, unknown routes) is bad-input.test.ts's.

type Json = Record<string, unknown>;

const having = (test: (e: ApiEndpoint) => boolean) => API_ENDPOINTS.filter(test).map((e) => [e.name, e] as const);
const KEYED = having((e) => e.auth === 'key');
const ADMIN = having((e) => e.auth === 'admin');
const JSON_BODIES = having((e) => e.body === 'json');

/**
 * Number fields with a body that is valid around them, and the values each must refuse (huge,
 * negative; fractions where counts are whole). Every number field the description names has a
 * row: the suite checks it below.
 */
// Written as JSON number literals: 9007199254740993 is not a number JavaScript can hold.
const HUGE_AND_NEGATIVE = ['1e308', '1e21', '9007199254740993', '-1', '-1e308'];
const NUMBERS: Array<[endpoint: string, field: string, rest: Json, refused: string[]]> = [
  ['POST /api/v1/admin/organizations/{id}/rate-limit', 'rateLimitPerHour', {}, [...HUGE_AND_NEGATIVE, '0.5']],
  ['POST /api/v1/admin/organizations/{id}/rate-limit', 'monthlyStreamLimit', {}, [...HUGE_AND_NEGATIVE, '0.5']],
  [
    'POST /api/v1/admin/organizations/{id}/license',
    'pricePerStream',
    { contentId: '*', contentType: 'video' },
    HUGE_AND_NEGATIVE,
  ],
  // money: above 0, at most 1,000,000, at most 6 decimals (a card payment: whole cents)
  [
    'POST /api/v1/billing/fund',
    'amount',
    { method: 'apusd' },
    [...HUGE_AND_NEGATIVE, '0', '1000000.01', '0.0000001', '4e-10', '1.005'],
  ],
  [
    'POST /api/v1/admin/organizations/{id}/credit',
    'amount',
    {},
    [...HUGE_AND_NEGATIVE, '0', '1000000.01', '0.0000001', '4e-10'],
  ],
  ['POST /api/v1/admin/organizations/{id}/watermark-pass', 'days', {}, [...HUGE_AND_NEGATIVE, '0', '0.5']],
];

/** Page and limit values out of every list's bounds, by the parameter they are for. */
const HUGE_PAGES: Array<[param: 'page' | 'limit', value: string]> = [
  ['page', '1e15'],
  ['page', '1e21'],
  ['page', '9007199254740993'],
  ['page', '-1'],
  ['page', '0'],
  ['page', 'abc'],
  ['page', '1.5'],
  ['page', ''],
  ['limit', '1e21'],
  ['limit', '-5'],
  ['limit', '0'],
];
const LISTS = having((e) => e.query.includes('page') || e.query.includes('limit'));

const HOSTILE_IDS = [
  randomUUID(),
  'not-a-uuid',
  '%E0%A4%A',
  'x'.repeat(300),
  "'%20or%201=1%20--",
  '..%2F..%2Fetc%2Fpasswd',
  '00000000-0000-0000-0000-000000000000',
];
const HOSTILE_IDEMPOTENCY_KEYS = ['', 'x'.repeat(256), 'two words', 'caf\u00e9'];

const MB_STRING = 'x'.repeat(1_000_000);

/** A JSON body where the endpoint reads one, so that a refusal is for what is tested and not for the missing body. */
const bodyOf = (e: ApiEndpoint) => (e.body === 'json' ? {} : undefined);

describe('the tables of the abuse suite', () => {
  it('has huge-number cases for every number field the description names, and none for a field it does not', () => {
    const described = API_ENDPOINTS.flatMap((e) => e.numbers.map((n) => `${e.name} ${n}`)).sort();
    expect(NUMBERS.map(([name, field]) => `${endpointNamed(name).name} ${field}`).sort()).toEqual(described);
  });
});

describe.each(DIALECTS)('abuse on %s', (dialect) => {
  const fx = useApiFixture(dialect);
  let t: TestApp;
  let f: ApiFixture;
  beforeAll(() => {
    ({ t, f } = fx);
  });
  const send = (e: ApiEndpoint, init?: SendInit) => sendTo(t, f, e, init);

  /** The server answers as before: health, and the organization's key. */
  async function expectStillServing() {
    expect((await t.request('GET', '/health')).status).toBe(200);
    expect((await t.request('GET', '/api/v1/auth/verify', { key: f.org.apiKey })).status).toBe(200);
  }

  describe('credentials', () => {
    afterAll(() => expectStillServing());

    it.each(KEYED)(
      '%s without a key, or with a wrong, malformed or non-Bearer one, is 401 INVALID_API_KEY',
      async (_, e) => {
        for (const authorization of [
          undefined,
          `Bearer drm_live_${'A'.repeat(40)}`,
          'Bearer nonsense',
          `Basic ${f.org.apiKey}`,
          f.org.apiKey,
          'Bearer',
          `Bearer ${f.token}`,
        ]) {
          const headers: Record<string, string> = authorization ? { authorization } : {};
          await expectError(await send(e, { credentials: {}, headers, body: bodyOf(e) }), 401, 'INVALID_API_KEY');
        }
      },
    );

    it.each(KEYED.filter(([, e]) => e.scope !== 'any'))(
      '%s with a key lacking its scope is 403 INSUFFICIENT_SCOPE',
      async (_, e) => {
        const key = e.scope === 'stream' ? f.catalogOnly : f.streamOnly;
        await expectError(await send(e, { credentials: { key }, body: bodyOf(e) }), 403, 'INSUFFICIENT_SCOPE');
      },
    );

    it('verify accepts a key of any scope', async () => {
      const res = await t.request('GET', '/api/v1/auth/verify', { key: f.streamOnly });
      expect(res.status).toBe(200);
      expect((await res.json()).scopes).toEqual(['stream']);
    });

    it.each(KEYED)(
      '%s with the key of a suspended organization is 403 ORGANIZATION_SUSPENDED, unless documented open to it',
      async (_, e) => {
        const res = await send(e, { credentials: { key: f.suspended }, body: bodyOf(e) });
        if (!e.suspendedMay) return expectError(res, 403, 'ORGANIZATION_SUSPENDED');
        const text = await res.text();
        expect(res.status, text).toBeLessThan(500);
        expect(text).not.toContain('ORGANIZATION_SUSPENDED');
      },
    );

    it.each(ADMIN)(
      '%s without a token, or with a malformed, foreign or API-key one, is 401 INVALID_ADMIN_TOKEN',
      async (_, e) => {
        const foreign = await new SignJWT({ role: 'admin' })
          .setProtectedHeader({ alg: 'HS256' })
          .setSubject(newAccount().address.toLowerCase())
          .setIssuer('drm')
          .setAudience('drm-admin')
          .setExpirationTime(Math.floor(t.clock.now() / 1000) + 3600)
          .sign(new TextEncoder().encode('not the server secret, not at all'));
        for (const key of [undefined, 'nonsense', 'a.b.c', f.org.apiKey, foreign]) {
          await expectError(await send(e, { credentials: { key }, body: bodyOf(e) }), 401, 'INVALID_ADMIN_TOKEN');
        }
      },
    );

    it.each(ADMIN)('%s with an expired token is 401 INVALID_ADMIN_TOKEN', async (_, e) => {
      const now = t.clock.now();
      const token = await adminToken(t);
      t.clock.advance(13 * 3_600_000);
      try {
        await expectError(await send(e, { credentials: { key: token } }), 401, 'INVALID_ADMIN_TOKEN');
      } finally {
        t.clock.set(now);
      }
    });

    it.each(ADMIN)('%s with the token of a wallet no longer granted is 403 ADMIN_REQUIRED', async (_, e) => {
      const account = newAccount();
      const token = await adminToken(t, account);
      await t.ctx.repos.admins.revoke(account.address.toLowerCase());
      await expectError(await send(e, { credentials: { key: token } }), 403, 'ADMIN_REQUIRED');
    });

    it.each(having((e) => e.auth === 'session'))(
      '%s without a session is 400, with an unknown or hostile one 400 or 404, with one of other content 404',
      async (_, e) => {
        await expectError(await send(e, { credentials: {} }), 400, 'BAD_REQUEST');
        for (const session of HOSTILE_IDS)
          await expectError(await send(e, { credentials: { query: `session=${session}` } }), [400, 404]);
        await expectError(await send(e, { first: randomUUID() }), 404, 'NOT_FOUND');
      },
    );

    it.each(having((e) => e.auth === 'none'))(
      '%s asks for no credentials, and a wrong one sent all the same is no reason to refuse it',
      async (_, e) => {
        for (const key of ['nonsense', f.suspended, f.token]) {
          const res = await send(e, { credentials: { key, query: 'session=nonsense' }, body: bodyOf(e) });
          const text = await res.text();
          expect([401, 403], text).not.toContain(res.status);
          expect(res.status, text).toBeLessThan(500);
        }
      },
    );
  });

  describe('huge and hostile values', () => {
    afterAll(() => expectStillServing());

    it.each(JSON_BODIES.filter(([, e]) => e.fields.length > 0))(
      '%s with a 1 MB string in any field is 400 BAD_REQUEST',
      async (_, e) => {
        for (const field of e.fields)
          await expectError(await send(e, { body: { [field]: MB_STRING } }), 400, 'BAD_REQUEST');
      },
    );

    it.each(NUMBERS)(
      '%s with %s huge, negative (or a fraction of a count) is 400 BAD_REQUEST',
      async (name, field, rest, refused) => {
        for (const value of refused) {
          const body = JSON.stringify({ ...rest, [field]: 0 }).replace(`"${field}":0`, `"${field}":${value}`);
          await expectError(await send(endpointNamed(name), { body }), 400, 'BAD_REQUEST');
        }
      },
    );

    it.each(LISTS)('%s with a huge, negative or malformed page or limit is 400 BAD_REQUEST', async (_, e) => {
      for (const [param, value] of HUGE_PAGES.filter(([p]) => e.query.includes(p)))
        await expectError(await send(e, { query: `${param}=${value}` }), 400, 'BAD_REQUEST');
      const last = await send(e, { query: e.query.includes('page') ? 'page=1000000&limit=100' : 'limit=100' });
      expect(last.status).toBe(200);
    });

    it.each(having((e) => e.params.length > 0))(
      '%s with an unknown, malformed or hostile id is 404 (400 where the form is wrong)',
      async (_, e) => {
        for (const id of HOSTILE_IDS) await expectError(await send(e, { first: id, body: bodyOf(e) }), [400, 404]);
      },
    );

    it.each(having((e) => e.headers.includes('Idempotency-Key')))(
      '%s with an Idempotency-Key that is empty, too long or not visible ASCII is 400 BAD_REQUEST',
      async (_, e) => {
        for (const key of HOSTILE_IDEMPOTENCY_KEYS) {
          const res = await send(e, { body: bodyOf(e), headers: { 'idempotency-key': key } });
          const text = await res.text();
          expect(res.status, text).toBe(400);
          expect(JSON.parse(text).error, text).toMatch(/Idempotency-Key/);
        }
      },
    );

    it('the viewer search with a binaryId that is not 40 bits is 400 BAD_REQUEST', async () => {
      const search = endpointNamed('GET /api/v1/viewers/search');
      for (const q of ['', 'binaryId=', `binaryId=${'2'.repeat(40)}`, `binaryId=${'0'.repeat(39)}`]) {
        await expectError(await send(search, { query: q }), 400, 'BAD_REQUEST');
      }
      await expectError(await send(search, { query: `binaryId=${'0'.repeat(100_000)}` }), 400, 'BAD_REQUEST');
    });

    it("a player's segment with a number that is no segment's is 400 or 404", async () => {
      for (const seg of ['x', '-1', '1e3', '99999999999', '0.mp4', '0.ts.ts', '%00']) {
        const path = `/api/v1/stream/${f.film.id}/segment/${seg}?session=${f.sessionId}`;
        await expectError(await t.request('GET', path), [400, 404]);
      }
    });

    it('POST /forensics/analyze with a body that is not a form with a file, or a hostile contentId, is refused (400 or 404)', async () => {
      const form = (fields: Json, file = true) => {
        const data = new FormData();
        for (const [k, v] of Object.entries(fields)) data.set(k, String(v));
        if (file) data.set('file', new Blob([Buffer.alloc(2048, 7)]), 'leak.mp4');
        return data;
      };
      const upload = (body: FormData | string) =>
        Promise.resolve(
          t.app.request('/api/v1/forensics/analyze', {
            method: 'POST',
            headers: { authorization: `Bearer ${f.org.apiKey}` },
            body,
          }),
        );
      await expectError(await upload('{"contentId": 1}'), 400, 'BAD_REQUEST');
      for (const contentId of HOSTILE_IDS)
        await expectError(await upload(form({ contentId, contentType: 'video' })), 404, 'NOT_FOUND');
      await expectError(
        await upload(form({ contentId: MB_STRING.slice(0, 100_000), contentType: 'video' })),
        [400, 404],
      );
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
        `0x${'ab'.repeat(20)}`,
        '',
      ),
    );
    const value = fc.oneof(
      leaf,
      fc.array(leaf, { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 6 }), leaf, { maxKeys: 3 }),
    );
    // Besides each body's own fields, those of the others that are not strings.
    const others = ['scopes', 'watermarkingEnabled', 'regenerateSecret', 'enabled', 'terms'];

    it.each(JSON_BODIES)('%s: 200 random bodies, none answered with a 500 or a body outside the spec', async (_, e) => {
      const names = [...new Set([...e.fields, ...API_ENDPOINTS.flatMap((x) => x.numbers), ...others])];
      const fields = fc.record(Object.fromEntries(names.map((k) => [k, value])), { requiredKeys: [] });
      const body = fc.oneof({ weight: 4, arbitrary: fields }, { weight: 1, arbitrary: fc.jsonValue() });
      await fc.assert(
        fc.asyncProperty(body, async (sent) => {
          const res = await send(e, { body: JSON.stringify(sent) });
          if (res.status >= 500)
            throw new Error(`${res.status} for ${JSON.stringify(sent).slice(0, 300)}: ${await res.text()}`);
          if (res.status >= 400) await expectError(res, res.status);
        }),
        { seed: 42, numRuns: 200 },
      );
    });
  });
});
