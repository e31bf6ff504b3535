import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import type { CaseRow, ContentRow } from '../../src/db/repos/index.js';
import { closePeriodsUntil } from '../../src/domain/billing/statement.js';
import type { ForensicReport } from '../../src/domain/forensics/report.js';
import { adminToken, newAccount, siweMessage } from './admin.js';
import { toNextMonth } from './billing.js';
import { makeTestApp, type TestApp } from './context.js';
import { addContent, license, registerOrg } from './fixtures.js';
import { deref, schemaProblems } from './openapi.js';
import { endpointNamed, pathOf } from './openapi-endpoints.js';

// The server that test/api/openapi-drift.test.ts and openapi-answers.test.ts check their OpenAPI
// document against, and what the checks send it: an organization with a licensed film, a stream
// session, a failed and a decided forensic case and an issued invoice, a second organization for
// the admin operations to act on, and an admin token.

export type Json = Record<string, unknown>;
export interface Op {
  method: string;
  path: string;
  op: Json;
}
/** The server, its document, every operation in it, and the ids of what the setup made. */
export interface OpenApiFixture {
  t: TestApp;
  doc: Json;
  ops: Op[];
  f: {
    orgId: string;
    apiKey: string;
    target: string;
    filmId: string;
    sessionId: string;
    viewerId: string;
    binaryId: string;
    caseId: string;
    invoiceId: string;
    subscriptionId: string;
    token: string;
  };
}

export const ROOT = path.resolve(__dirname, '../..');
export const without = (body: Json, fields: string[]) =>
  Object.fromEntries(Object.entries(body).filter(([k]) => !fields.includes(k)));

function caseRow(organizationId: string, contentId: string, fields: Partial<CaseRow>): CaseRow {
  return {
    ...{
      id: randomUUID(),
      organizationId,
      apiKeyId: null,
      contentId,
      contentType: 'video',
      status: 'processing',
      failureReason: null,
    },
    ...{
      uploadPath: null,
      uploadName: null,
      uploadBytes: null,
      attempts: 1,
      leaseUntil: null,
      leasedBy: null,
      classification: null,
      progress: null,
      leakFrames: null,
    },
    ...{
      binaryId: null,
      supportedBits: null,
      matchedViewerId: null,
      matchedSessionId: null,
      report: null,
      createdAt: 0,
      completedAt: 0,
    },
    ...fields,
  };
}

/** A case decided against the session's viewer, as the queue stores one: the views with an evidence chain are checked too. */
function decidedCase(organizationId: string, film: ContentRow, session: Json, now: number): CaseRow {
  const binaryId = session.binaryId as string;
  const report: ForensicReport = {
    ...{
      classification: 'strong_match',
      binaryId,
      readout: binaryId,
      supportedBits: 40,
      markProbability: 1e-12,
      identificationProbability: 0,
    },
    ...{
      candidates: 1,
      score: 12.5,
      contradictions: 0,
      seconds: 3.2,
      decidedBits: 40,
      fitting: 1,
      candidateSet: [],
      reason: 'one viewer fits',
    },
    detection: {
      segments: [{ index: 0, z: 9.13, bit: '0', coverage: 10 }],
      alignment: { offsetSeconds: 0, method: 'grid' },
    },
    evidence: {
      apiKey: { id: randomUUID(), prefix: 'drm_live_abc', name: 'default' },
      organization: { id: organizationId, name: 'Acme Films', email: 'ops@acme.test' },
      wallet: { address: session.walletAddress as string, hasOwnWallet: false },
      session: {
        id: session.sessionId as string,
        binaryId,
        isActive: true,
        bytesServed: 0,
        createdAt: now,
        expiresAt: now + 3_600_000,
      },
      viewer: {
        viewerId: session.viewerId as string,
        externalViewerId: 'openapi-viewer',
        ipAddress: '203.0.113.9',
        userAgent: 'ffmpeg',
      },
      content: { contentId: film.id, contentType: 'video', title: film.title },
      viewerSessions: 1,
    },
  };
  const matched = { matchedViewerId: session.viewerId as string, matchedSessionId: session.sessionId as string };
  return caseRow(organizationId, film.id, {
    status: 'completed',
    classification: 'strong_match',
    binaryId,
    supportedBits: 40,
    ...matched,
    report: JSON.stringify(report),
    createdAt: now,
    completedAt: now,
  });
}

/** Starts a server of the API shape, reads its document, and makes what the checks read. */
async function openApiFixture(shape: 'a' | 'b'): Promise<OpenApiFixture> {
  const f = {
    orgId: '',
    apiKey: '',
    target: '',
    filmId: '',
    sessionId: '',
    viewerId: '',
    binaryId: '',
    caseId: '',
    invoiceId: '',
    subscriptionId: '',
    token: '',
  };
  // No DNS lookups for the examples' webhook URLs: the policy is not what is tested here.
  // The test send reaches a receiver that answers 204 (no network).
  const receiver = (async () => new Response(null, { status: 204 })) as unknown as typeof fetch;
  const t = await makeTestApp('sqlite', { config: { allowPrivateWebhooks: true, apiShape: shape }, fetch: receiver });
  const res = await t.request('GET', '/openapi.json');
  expect(res.status).toBe(200);
  const doc = (await res.json()) as Json;
  const ops = Object.entries(doc.paths as Json).flatMap(([p, item]) =>
    Object.entries(item as Json).map(([method, op]) => ({ method, path: p, op: op as Json })),
  );

  const org = await registerOrg(t);
  await t.ctx.repos.organizations.update(org.organizationId, { rateLimitPerHour: 1_000_000 });
  const film = await addContent(t, { storagePath: 'not-packaged' });
  await license(t, org.organizationId, film.id);
  const session = (await (
    await t.request('POST', `/api/v1/stream/${film.id}`, { key: org.apiKey, body: { viewerId: 'openapi-viewer' } })
  ).json()) as Json;
  await t.ctx.repos.forensicCases.insert(
    caseRow(org.organizationId, film.id, { status: 'failed', failureReason: 'fixture' }),
  );
  const decided = decidedCase(org.organizationId, film, session, t.clock.now());
  await t.ctx.repos.forensicCases.insert(decided);
  // An issued invoice to read: the month with the session closes.
  toNextMonth(t);
  await closePeriodsUntil(t.ctx, undefined);
  const invoice = (await t.ctx.repos.invoices.list(org.organizationId, { limit: 1, offset: 0 })).rows[0];
  Object.assign(f, {
    orgId: org.organizationId,
    apiKey: org.apiKey,
    target: (await registerOrg(t, { name: 'Target' })).organizationId,
    filmId: film.id,
    sessionId: session.sessionId,
    viewerId: session.viewerId,
    binaryId: session.binaryId,
    caseId: decided.id,
    invoiceId: invoice?.id,
    token: await adminToken(t),
  });
  return { t, doc, ops, f };
}

/**
 * Starts the fixture before a suite's tests (then `prepare`, where given) and closes it after them;
 * the holder's `fx` is set once the tests run.
 */
export function useOpenApiFixture(
  shape: 'a' | 'b',
  prepare?: (fx: OpenApiFixture) => Promise<void>,
): { fx: OpenApiFixture } {
  const holder = {} as { fx: OpenApiFixture };
  beforeAll(async () => {
    holder.fx = await openApiFixture(shape);
    await prepare?.(holder.fx);
  });
  afterAll(() => holder.fx.t.close());
  return holder;
}

/** A real value for each path parameter (test/helpers/openapi-endpoints.ts says what each names). */
export function realPath({ f }: OpenApiFixture, p: string, method: string): string {
  return pathOf(endpointNamed(`${method.toUpperCase()} ${p}`), {
    ...{ organization: f.target, content: f.filmId, session: f.sessionId, viewer: f.viewerId, case: f.caseId },
    ...{ invoice: f.invoiceId, subscription: f.subscriptionId || randomUUID(), segment: '0' },
  });
}

/** The credentials an operation's security asks for: a header, or the session in the query. */
export function credentials({ f }: OpenApiFixture, op: Json): { headers: Record<string, string>; query: string } {
  const scheme = Object.keys(((op.security as Json[]) ?? [])[0] ?? {})[0];
  if (scheme === 'ApiKey') return { headers: { authorization: `Bearer ${f.apiKey}` }, query: '' };
  if (scheme === 'AdminToken') return { headers: { authorization: `Bearer ${f.token}` }, query: '' };
  if (scheme === 'ViewerSession') return { headers: {}, query: `session=${f.sessionId}` };
  return { headers: {}, query: '' };
}

/** Sends a request as the operation documents it, with its required query parameters. */
export async function send(fx: OpenApiFixture, o: Op, body?: unknown): Promise<Response> {
  const { headers, query } = credentials(fx, o.op);
  const required = ((o.op.parameters ?? []) as Json[]).filter((p) => p.in === 'query' && p.required);
  const params = [
    query,
    ...required.map((p) => `${String(p.name)}=${p.name === 'binaryId' ? fx.f.binaryId : 'x'}`),
  ].filter(Boolean);
  const url = `${realPath(fx, o.path, o.method)}${params.length > 0 ? `?${params.join('&')}` : ''}`;
  return fx.t.request(o.method.toUpperCase(), url, { headers, body });
}

/** The answer is one the operation documents, and a JSON answer fits its schema. */
export async function expectDocumented({ doc }: OpenApiFixture, o: Op, res: Response): Promise<void> {
  const name = `${o.method.toUpperCase()} ${o.path}`;
  const responses = o.op.responses as Json;
  const documentedResponse = responses[String(res.status)] ?? responses.default;
  const text = await res.text();
  // Every operation documents 500; an answer of it is a failure here all the same.
  expect(res.status, `${name}: ${text.slice(0, 300)}`).not.toBe(500);
  expect(
    documentedResponse,
    `${name} answered ${res.status}, which it does not document: ${text.slice(0, 300)}`,
  ).toBeDefined();
  const content = (deref(doc, documentedResponse).content ?? {}) as Record<string, Json>;
  const base = (type: string | null) => type?.split(';')[0]?.trim();
  const types = Object.keys(content).map(base);
  if (types.length > 0)
    expect(types, `${name} ${res.status} answered ${res.headers.get('content-type')}`).toContain(
      base(res.headers.get('content-type')),
    );
  const schema = content['application/json']?.schema as Json | undefined;
  if (!schema || !res.headers.get('content-type')?.startsWith('application/json')) return;
  expect(schemaProblems(doc, JSON.parse(text), schema), `${name} ${res.status}: ${text.slice(0, 300)}`).toEqual([]);
}

/** The operations with a JSON request body, and that body's media type object. */
export const jsonBodies = ({ doc, ops }: OpenApiFixture) =>
  ops.filter((o) => (deref(doc, o.op.requestBody ?? {}).content as Json | undefined)?.['application/json']);
export const media = ({ doc }: OpenApiFixture, o: Op) =>
  (deref(doc, o.op.requestBody).content as Json)['application/json'] as Json;

/** Sends each operation's documented JSON example, and hands each answer to `check`. */
export async function sendExamples(fx: OpenApiFixture, check: (o: Op, res: Response) => Promise<void>): Promise<void> {
  // The sign-in's example cannot carry a valid signature: a real one is signed here.
  const account = newAccount();
  const { grantAdmin } = await import('../../src/domain/admin/organizations.js');
  await grantAdmin(fx.t.ctx, account.address);
  const message = await siweMessage(fx.t, account);
  const real: Record<string, unknown> = { adminSignIn: { message, signature: await account.signMessage({ message }) } };
  for (const o of jsonBodies(fx)) {
    const example = real[o.op.operationId as string] ?? media(fx, o).example;
    if (example === undefined) continue;
    await check(o, await send(fx, o, example));
  }
}
