import { randomUUID } from 'node:crypto';
import type { ApiFixture } from './api-fixture.js';

// The invalid values of bad-input.test.ts, keyed by the endpoint's `METHOD /path` as the OpenAPI
// document writes it (test/helpers/openapi-endpoints.ts). They are the suite's own knowledge of
// each validator, so they cannot be derived; but every endpoint that reads a body needs rows in
// INVALID_FIELDS and every one with a query parameter rows in INVALID_QUERIES, and
// test/api/route-coverage.test.ts fails naming an endpoint that has none.

type Body = (f: ApiFixture) => unknown;

/** A multipart upload of a leak, with the fields given (and a small file unless `file` is false). */
export function leakForm(fields: Record<string, string>, file = true): FormData {
  const data = new FormData();
  for (const [k, v] of Object.entries(fields)) data.set(k, v);
  if (file) data.set('file', new Blob([Buffer.alloc(2048, 7)]), 'leak.mp4');
  return data;
}

const REGISTER = 'POST /api/v1/auth/register';
const WEBHOOK = 'PUT /api/v1/webhook';
const SIGN_IN = 'POST /api/v1/admin/auth/verify';
const LICENSE = 'POST /api/v1/admin/organizations/{id}/license';
const RATE_LIMIT = 'POST /api/v1/admin/organizations/{id}/rate-limit';
const SUSPEND = 'POST /api/v1/admin/organizations/{id}/suspend';
const SESSION = 'POST /api/v1/stream/{id}';
const BLOCK = 'POST /api/v1/viewers/{viewerId}/block';
const FUND = 'POST /api/v1/billing/fund';
const SUBSCRIBE = 'POST /api/v1/billing/subscriptions';
const CARD_EVENT = 'POST /api/v1/billing/webhooks/fiat';
const ANALYZE = 'POST /api/v1/forensics/analyze';
const CREDIT = 'POST /api/v1/admin/organizations/{id}/credit';
const PLAN = 'POST /api/v1/admin/organizations/{id}/plan';
const PASS = 'POST /api/v1/admin/organizations/{id}/watermark-pass';
const CLOSE = 'POST /api/v1/admin/billing/close-period';

const autopay = (name: string): Array<[string, string, Body]> => [
  [name, 'an empty body', () => ({})],
  [name, "enabled: 'yes'", () => ({ enabled: 'yes' })],
  [name, 'an unknown method', () => ({ enabled: true, method: 'cash' })],
  [name, 'an empty customerId', () => ({ enabled: true, customerId: '' })],
  [name, "a customerId the organization's is not", () => ({ enabled: true, customerId: 'cus_unknown' })],
];

/** Wrong field types and invalid values, per endpoint that reads a body: all 400 BAD_REQUEST. */
export const INVALID_FIELDS: Array<[endpoint: string, what: string, body: Body, headers?: Record<string, string>]> = [
  [REGISTER, 'no name', () => ({ email: 'a@b.test' })],
  [REGISTER, 'name: 42', () => ({ name: 42 })],
  [REGISTER, 'an empty name', () => ({ name: '   ' })],
  [REGISTER, 'a name of 201 characters', () => ({ name: 'n'.repeat(201) })],
  [REGISTER, 'email: 5', () => ({ name: 'X', email: 5 })],
  [REGISTER, 'an email without @', () => ({ name: 'X', email: 'nobody' })],
  [REGISTER, 'walletAddress: true', () => ({ name: 'X', walletAddress: true })],
  [REGISTER, 'a walletAddress that is no address', () => ({ name: 'X', walletAddress: '0x123' })],
  [REGISTER, 'signingAlgorithm HS256', () => ({ name: 'X', signingAlgorithm: 'HS256' })],
  [REGISTER, 'signingAlgorithm: 256', () => ({ name: 'X', signingAlgorithm: 256 })],
  [REGISTER, 'a signingPublicKey that is no PEM', () => ({ name: 'X', signingPublicKey: 'not a key' })],
  [REGISTER, 'signingPublicKey: {}', () => ({ name: 'X', signingPublicKey: {} })],
  [REGISTER, 'webhookUrl: 5', () => ({ name: 'X', webhookUrl: 5 })],
  [REGISTER, 'a webhookUrl that is no URL', () => ({ name: 'X', webhookUrl: 'not a url' })],
  [REGISTER, 'an ftp webhookUrl', () => ({ name: 'X', webhookUrl: 'ftp://93.184.215.14/x' })],
  [REGISTER, 'a loopback webhookUrl', () => ({ name: 'X', webhookUrl: 'http://127.0.0.1/hook' })],
  [REGISTER, 'an admin-only plan', () => ({ name: 'X', plan: 'white-label' })],
  [REGISTER, 'an unknown plan', () => ({ name: 'X', plan: 'free' })],
  [REGISTER, 'plan: 1', () => ({ name: 'X', plan: 1 })],
  [REGISTER, "scopes: 'catalog'", () => ({ name: 'X', scopes: 'catalog' })],
  [REGISTER, 'an unknown scope', () => ({ name: 'X', scopes: ['catalog', 'admin'] })],
  [REGISTER, 'no scopes', () => ({ name: 'X', scopes: [] })],
  [WEBHOOK, 'an empty body', () => ({})],
  [WEBHOOK, 'webhookUrl: 5', () => ({ webhookUrl: 5 })],
  [WEBHOOK, "regenerateSecret: 'yes'", () => ({ regenerateSecret: 'yes' })],
  [WEBHOOK, 'regenerateSecret: 1', () => ({ regenerateSecret: 1 })],
  [WEBHOOK, 'a webhookUrl that is no URL', () => ({ webhookUrl: 'hook' })],
  [WEBHOOK, 'a javascript: webhookUrl', () => ({ webhookUrl: 'javascript:alert(1)' })],
  [WEBHOOK, 'a webhookUrl with credentials', () => ({ webhookUrl: 'https://u:p@93.184.215.14/' })],
  [WEBHOOK, 'a private webhookUrl', () => ({ webhookUrl: 'http://10.0.0.5/hook' })],
  [WEBHOOK, 'webhookUrl: []', () => ({ webhookUrl: [] })],
  [SIGN_IN, 'an empty body', () => ({})],
  [SIGN_IN, 'message: 42', () => ({ message: 42, signature: '0x00' })],
  [SIGN_IN, 'signature: 42', () => ({ message: 'hello', signature: 42 })],
  [SIGN_IN, 'a message that is no SIWE message', () => ({ message: 'hello', signature: '0xabcd' })],
  [SIGN_IN, 'a signature that is not hex', () => ({ message: 'hello', signature: 'zz' })],
  [LICENSE, 'an empty body', () => ({})],
  [LICENSE, 'contentId: 42', () => ({ contentId: 42, contentType: 'video' })],
  [LICENSE, 'contentId that is no UUID', () => ({ contentId: 'abc', contentType: 'video' })],
  [LICENSE, 'no contentType', () => ({ contentId: '*' })],
  [LICENSE, 'contentType film', () => ({ contentId: '*', contentType: 'film' })],
  [LICENSE, 'contentType: 1', () => ({ contentId: '*', contentType: 1 })],
  [
    LICENSE,
    'licenseScope specific with the wildcard',
    () => ({ contentId: '*', contentType: 'video', licenseScope: 'specific' }),
  ],
  [
    LICENSE,
    'licenseScope all with one content id',
    (f) => ({ contentId: f.film.id, contentType: 'video', licenseScope: 'all' }),
  ],
  [LICENSE, 'an unknown licenseScope', () => ({ contentId: '*', contentType: 'video', licenseScope: 'some' })],
  [LICENSE, "watermarkingEnabled: 'yes'", () => ({ contentId: '*', contentType: 'video', watermarkingEnabled: 'yes' })],
  [LICENSE, "pricePerStream: 'free'", () => ({ contentId: '*', contentType: 'video', pricePerStream: 'free' })],
  [LICENSE, 'a negative pricePerStream', () => ({ contentId: '*', contentType: 'video', pricePerStream: -1 })],
  [LICENSE, 'a music id licensed as video', (f) => ({ contentId: f.song.id, contentType: 'video' })],
  [RATE_LIMIT, 'an empty body', () => ({})],
  [RATE_LIMIT, "rateLimitPerHour: '10'", () => ({ rateLimitPerHour: '10' })],
  [RATE_LIMIT, 'rateLimitPerHour: 0', () => ({ rateLimitPerHour: 0 })],
  [RATE_LIMIT, 'rateLimitPerHour: 1.5', () => ({ rateLimitPerHour: 1.5 })],
  [RATE_LIMIT, 'monthlyStreamLimit: -1', () => ({ monthlyStreamLimit: -1 })],
  [RATE_LIMIT, 'monthlyStreamLimit: true', () => ({ monthlyStreamLimit: true })],
  [RATE_LIMIT, 'keyId: 5', () => ({ keyId: 5, rateLimitPerHour: 3 })],
  [
    RATE_LIMIT,
    'a keyId with monthlyStreamLimit',
    () => ({ keyId: randomUUID(), rateLimitPerHour: 3, monthlyStreamLimit: 3 }),
  ],
  [RATE_LIMIT, 'a keyId without rateLimitPerHour', () => ({ keyId: randomUUID() })],
  [SUSPEND, 'no reason', () => ({})],
  [SUSPEND, 'reason: 42', () => ({ reason: 42 })],
  [SUSPEND, 'an empty reason', () => ({ reason: '' })],
  [SESSION, 'viewerToken: 42', () => ({ viewerToken: 42 })],
  [SESSION, 'a walletAddress that is no address', () => ({ walletAddress: '0x123' })],
  [SESSION, 'an empty viewerId', () => ({ viewerId: '' })],
  [SESSION, 'a viewerId of 257 characters', () => ({ viewerId: 'v'.repeat(257) })],
  [BLOCK, 'reason: 42', () => ({ reason: 42 })],
  [BLOCK, 'a reason of 501 characters', () => ({ reason: 'r'.repeat(501) })],
  [FUND, 'no method', () => ({ amount: 5 })],
  [FUND, 'an unknown method', () => ({ method: 'cash', amount: 5 })],
  [FUND, 'no amount', () => ({ method: 'apusd' })],
  [FUND, "amount: '5'", () => ({ method: 'apusd', amount: '5' })],
  [FUND, 'paymentIntentId: 5', () => ({ method: 'fiat_card', amount: 5, paymentIntentId: 5 })],
  [FUND, 'a paymentIntentId that is no intent', () => ({ method: 'fiat_card', amount: 5, paymentIntentId: 'ch_1' })],
  [FUND, 'a card amount in fractions of a cent', () => ({ method: 'fiat_card', amount: 1.005 })],
  ...autopay('PUT /api/v1/billing/autopay'),
  ...autopay('POST /api/v1/billing/autopay'),
  [SUBSCRIBE, 'an empty body', () => ({})],
  [SUBSCRIBE, 'an unknown product', () => ({ product: 'gold', interval: 'month' })],
  [SUBSCRIBE, 'an unknown interval', () => ({ product: 'videos', interval: 'week' })],
  [SUBSCRIBE, 'product: 1', () => ({ product: 1, interval: 'month' })],
  [CARD_EVENT, 'an event without its signature', () => ({ id: 'evt_1', type: 'payment_intent.succeeded' })],
  [
    CARD_EVENT,
    'an event signed with another secret',
    () => ({ id: 'evt_1', type: 'payment_intent.succeeded' }),
    { 'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'ab'.repeat(32)}` },
  ],
  [ANALYZE, 'a form without the file', (f) => leakForm({ contentId: f.film.id, contentType: 'video' }, false)],
  [ANALYZE, 'a form without contentType', (f) => leakForm({ contentId: f.film.id })],
  [ANALYZE, 'a form without contentId', () => leakForm({ contentType: 'video' })],
  [ANALYZE, 'contentType film', (f) => leakForm({ contentId: f.film.id, contentType: 'film' })],
  [ANALYZE, 'a JSON body, not a form', () => '{"contentId": 1}'],
  [CREDIT, 'an empty body', () => ({})],
  [CREDIT, "amount: '5'", () => ({ amount: '5' })],
  [CREDIT, 'an idempotencyKey of 7 characters', () => ({ amount: 5, idempotencyKey: 'k'.repeat(7) })],
  [CREDIT, 'reason: 42', () => ({ amount: 5, reason: 42 })],
  [PLAN, 'an empty body', () => ({})],
  [PLAN, 'an unknown plan', () => ({ plan: 'gold' })],
  [PLAN, "terms: 'cheap'", () => ({ plan: 'paid', terms: 'cheap' })],
  [PLAN, 'a negative monthlyPrice', () => ({ plan: 'paid', terms: { monthlyPrice: -1 } })],
  [PLAN, 'a revenueSharePct over 100', () => ({ plan: 'paid', terms: { revenueSharePct: 101 } })],
  [PASS, 'an empty body', () => ({})],
  [PASS, 'both until and days', () => ({ until: '2999-01-01T00:00:00Z', days: 3 })],
  [PASS, 'an until in the past', () => ({ until: '2000-01-01T00:00:00Z' })],
  [PASS, 'an until that is no time', () => ({ until: 'tomorrow' })],
  [PASS, 'days: 3661', () => ({ days: 3661 })],
  [CLOSE, 'period: 42', () => ({ period: 42 })],
  [CLOSE, 'a period that is no month', () => ({ period: '2024-13' })],
  [CLOSE, 'a period not yet ended', () => ({ period: '2999-01' })],
];

/** Query strings out of bounds: 400 BAD_REQUEST. */
export const INVALID_QUERIES: Array<[endpoint: string, query: string]> = [
  ['GET /api/v1/catalog', 'limit=0'],
  ['GET /api/v1/catalog', 'limit=201'],
  ['GET /api/v1/catalog', 'page=abc'],
  ['GET /api/v1/viewers', 'blocked=maybe'],
  ['GET /api/v1/viewers', 'limit=201'],
  ['GET /api/v1/viewers/search', ''],
  ['GET /api/v1/viewers/search', 'binaryId=0101'],
  ['GET /api/v1/webhook/deliveries', 'limit=101'],
  ['GET /api/v1/webhook/deliveries', 'page=0'],
  ['GET /api/v1/webhook/deliveries', 'limit=x'],
  ['GET /api/v1/billing/invoices', 'limit=101'],
  ['GET /api/v1/billing/invoices', 'page=x'],
  ['POST /api/v1/forensics/analyze', 'async=maybe'],
  ['GET /api/v1/forensics/cases', 'limit=101'],
  ['GET /api/v1/admin/forensics/cases', 'limit=101'],
  ['GET /api/v1/admin/organizations', 'limit=501'],
  ['GET /api/v1/admin/organizations', 'page=-1'],
  ['GET /api/v1/admin/organizations', 'limit=2.5'],
  ['GET /api/v1/admin/content', 'limit=201'],
  ['GET /api/v1/admin/content', 'page=0'],
  ['DELETE /api/v1/admin/content/{id}', 'force=yes'],
  ['GET /api/v1/admin/organizations/{id}/billing', 'limit=101'],
  ['GET /api/v1/admin/organizations/{id}/billing', 'page=0'],
  ['GET /api/v1/admin/billing/deposits', 'organizationId=nope'],
  ['GET /api/v1/admin/billing/deposits', 'limit=201'],
];
