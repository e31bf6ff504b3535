import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll } from 'vitest';
import type { CaseRow, ContentRow } from '../../src/db/repos/index.js';
import { resolveFiatConfig } from '../../src/payments/config.js';
import { adminToken } from './admin.js';
import { type CardStandIn, SECRET_KEY, startCardStandIn, WEBHOOK_SECRET } from './card-processor.js';
import { type DialectName, makeTestApp, type TestApp } from './context.js';
import { addContent, license, registerOrg } from './fixtures.js';
import { type ApiEndpoint, type PathIds, pathOf } from './openapi-endpoints.js';

// What abuse.test.ts and bad-input.test.ts send their requests with: a server whose every
// endpoint can answer (card payments configured against the local stand-in, so that the card
// processor's events are checked rather than refused as not configured), and one of each thing
// an endpoint's path can name, with keys that lack a scope, a suspended organization's key and an
// admin token.

export interface ApiFixture {
  /** an organization with all four scopes and the hourly limit lifted; its key is never rotated */
  org: Awaited<ReturnType<typeof registerOrg>>;
  /** keys of organizations holding one scope only */
  catalogOnly: string;
  streamOnly: string;
  /** the key of an organization the platform admin suspended */
  suspended: string;
  /** the organization the admin endpoints act on */
  target: string;
  film: ContentRow;
  song: ContentRow;
  sessionId: string;
  viewerId: string;
  caseId: string;
  token: string;
  /** a real one of each resource a path names (no invoice or subscription is made: those are unknown ids) */
  ids: PathIds;
}

function failedCase(organizationId: string, contentId: string, now: number): CaseRow {
  return {
    ...{ id: randomUUID(), organizationId, apiKeyId: null, contentId, contentType: 'video', status: 'failed' },
    ...{ failureReason: 'fixture', uploadPath: null, uploadName: null, uploadBytes: null, attempts: 1 },
    ...{ leaseUntil: null, leasedBy: null, classification: null, binaryId: null, supportedBits: null },
    ...{ matchedViewerId: null, matchedSessionId: null, report: null, progress: null, leakFrames: null },
    ...{ createdAt: now, completedAt: now },
  };
}

async function makeFixture(t: TestApp): Promise<ApiFixture> {
  const org = await registerOrg(t);
  // Thousands of requests come from this one organization: the hourly limit is not what is tested here.
  await t.ctx.repos.organizations.update(org.organizationId, { rateLimitPerHour: 1_000_000 });
  // A packaged stream is not needed: sessions are made, never played, here.
  const film = await addContent(t, { title: 'Licensed film', storagePath: 'not-packaged' });
  const song = await addContent(t, { type: 'music', title: 'A song', resolution: null });
  await license(t, org.organizationId, film.id);
  const res = await t.request('POST', `/api/v1/stream/${film.id}`, { key: org.apiKey, body: { viewerId: 'fixture' } });
  const session = (await res.json()) as { sessionId: string; viewerId: string };
  const caseRow = failedCase(org.organizationId, film.id, t.clock.now());
  await t.ctx.repos.forensicCases.insert(caseRow);
  const token = await adminToken(t);
  const suspended = await registerOrg(t, { name: 'Suspended' });
  const suspension = await t.request('POST', `/api/v1/admin/organizations/${suspended.organizationId}/suspend`, {
    key: token,
    body: { reason: 'unpaid invoices' },
  });
  if (suspension.status !== 200) throw new Error(`suspend failed: ${await suspension.text()}`);
  const target = (await registerOrg(t, { name: 'Target' })).organizationId;
  return {
    ...{ org, film, song, token, target, suspended: suspended.apiKey },
    catalogOnly: (await registerOrg(t, { name: 'Catalog Only', scopes: ['catalog'] })).apiKey,
    streamOnly: (await registerOrg(t, { name: 'Stream Only', scopes: ['stream'] })).apiKey,
    ...{ sessionId: session.sessionId, viewerId: session.viewerId, caseId: caseRow.id },
    ids: {
      ...{ organization: target, content: film.id, session: session.sessionId, viewer: session.viewerId },
      ...{ case: caseRow.id, invoice: randomUUID(), subscription: randomUUID(), segment: '0' },
    },
  };
}

/** Starts the server and its fixture before a suite's tests and closes them after; `t` and `f` are set once the tests run. */
export function useApiFixture(dialect: DialectName): { t: TestApp; f: ApiFixture } {
  const holder = {} as { t: TestApp; f: ApiFixture; cards: CardStandIn };
  beforeAll(async () => {
    holder.cards = await startCardStandIn();
    const fiat = resolveFiatConfig(
      {},
      { DRM_FIAT_SECRET_KEY: SECRET_KEY, DRM_FIAT_WEBHOOK_SECRET: WEBHOOK_SECRET, DRM_FIAT_API_BASE: holder.cards.url },
    );
    holder.t = await makeTestApp(dialect, { config: { fiat } });
    holder.f = await makeFixture(holder.t);
  });
  afterAll(async () => {
    await holder.t?.close();
    await holder.cards?.close();
  });
  return holder;
}

/** The credential an endpoint asks for, as the fixture holds it: a key or an admin token, or a session in the query. */
export function credentialsOf(f: ApiFixture, e: ApiEndpoint): { key?: string; query?: string } {
  if (e.auth === 'key') return { key: f.org.apiKey };
  if (e.auth === 'admin') return { key: f.token };
  if (e.auth === 'session') return { query: `session=${f.sessionId}` };
  return {};
}

/** Ids for an endpoint's path: real ones, but unknown ones for a DELETE, which would end what the other cases use. */
export function idsFor(f: ApiFixture, e: ApiEndpoint): PathIds {
  if (e.method !== 'DELETE') return f.ids;
  return Object.fromEntries(Object.keys(f.ids).map((k) => [k, randomUUID()])) as unknown as PathIds;
}

export interface SendInit {
  /** instead of the credential the endpoint asks for (`{}`: none) */
  credentials?: { key?: string; query?: string };
  query?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** stands in the path's first parameter (a hostile id) */
  first?: string;
}

/** Sends a request to the endpoint with the fixture's ids and credentials, as `init` changes them (a form as multipart). */
export function sendTo(t: TestApp, f: ApiFixture, e: ApiEndpoint, init: SendInit = {}): Promise<Response> {
  const credentials = init.credentials ?? credentialsOf(f, e);
  const query = [credentials.query, init.query].filter(Boolean).join('&');
  const url = `${pathOf(e, idsFor(f, e), init.first)}${query ? `?${query}` : ''}`;
  if (init.body instanceof FormData) {
    const headers = { ...init.headers, ...(credentials.key && { authorization: `Bearer ${credentials.key}` }) };
    return Promise.resolve(t.app.request(url, { method: e.method, headers, body: init.body }));
  }
  return t.request(e.method, url, { key: credentials.key, body: init.body, headers: init.headers });
}
