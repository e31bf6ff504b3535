import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../server/openapi/components.js';
import { openApiDocument } from '../../server/openapi/document.js';
import type { CaseRow, ContentRow } from '../../src/db/repos/index.js';
import { closePeriodsUntil } from '../../src/domain/billing/statement.js';
import type { ForensicReport } from '../../src/domain/forensics/report.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { DrmError, type ErrorCode } from '../../src/errors.js';
import { adminToken, newAccount, siweMessage } from '../helpers/admin.js';
import { makeTestApp, type TestApp } from '../helpers/context.js';
import { expectError } from '../helpers/expect-error.js';
import { toNextMonth } from '../helpers/billing.js';
import { addContent, license, registerOrg } from '../helpers/fixtures.js';
import { deref, schemaProblems, structuralProblems } from '../helpers/openapi.js';

// Issue 20, point 5 (part): GET /openapi.json describes every endpoint, and these checks keep the
// description from drifting from the code, for a server of each API shape:
// - the routes hono registers and the documented operations are the same set;
// - the documented security is what the middleware asks (no credentials: refused; the scope named
//   and no other);
// - every required field of a documented JSON body is required by the validators (the example
//   without it is 400), and the documented example is accepted; query parameters likewise;
// - what the server answers is a status the operation documents, in its media type, and a JSON
//   answer fits the documented schema with no undocumented field; the same for the webhook events.
// Only the route comparison reaches two operations: the card processor's event (it needs the
// processor's signature; card-funding.test.ts sends real ones) and an accepted leak upload (it
// needs real media and an analysis; forensics.test.ts). SQLite only: the document and the
// validators do not depend on the dialect, and the other API suites run the routes on both.

type Json = Record<string, unknown>;
interface Op {
  method: string;
  path: string;
  op: Json;
}

const ROOT = path.resolve(__dirname, '../..');
const without = (body: Json, fields: string[]) => Object.fromEntries(Object.entries(body).filter(([k]) => !fields.includes(k)));

function caseRow(organizationId: string, contentId: string, fields: Partial<CaseRow>): CaseRow {
  return {
    ...{ id: randomUUID(), organizationId, apiKeyId: null, contentId, contentType: 'video', status: 'processing', failureReason: null },
    ...{ uploadPath: null, uploadName: null, uploadBytes: null, attempts: 1, leaseUntil: null, classification: null, progress: null, leakFrames: null },
    ...{ binaryId: null, supportedBits: null, matchedViewerId: null, matchedSessionId: null, report: null, createdAt: 0, completedAt: 0 },
    ...fields,
  };
}

/** A case decided against the session's viewer, as the queue stores one: the views with an evidence chain are checked too. */
function decidedCase(organizationId: string, film: ContentRow, session: Json, now: number): CaseRow {
  const binaryId = session.binaryId as string;
  const report: ForensicReport = {
    ...{ classification: 'strong_match', binaryId, readout: binaryId, supportedBits: 40, falsePositiveProbability: 1e-12, confusionProbability: 1e-9 },
    ...{ candidates: 1, score: 12.5, runnerUp: null, contradictions: 0, seconds: 3.2 },
    detection: { segments: [{ index: 0, z: 9.13, bit: '0', coverage: 10 }], alignment: { offsetSeconds: 0, method: 'grid' } },
    evidence: {
      apiKey: { id: randomUUID(), prefix: 'drm_live_abc', name: 'default' },
      organization: { id: organizationId, name: 'Acme Films', email: 'ops@acme.test' },
      wallet: { address: session.walletAddress as string, hasOwnWallet: false },
      session: { id: session.sessionId as string, binaryId, isActive: true, bytesServed: 0, createdAt: now, expiresAt: now + 3_600_000 },
      viewer: { viewerId: session.viewerId as string, externalViewerId: 'openapi-viewer', ipAddress: '203.0.113.9', userAgent: 'ffmpeg' },
      content: { contentId: film.id, contentType: 'video', title: film.title },
      viewerSessions: 1,
    },
  };
  const matched = { matchedViewerId: session.viewerId as string, matchedSessionId: session.sessionId as string };
  return caseRow(organizationId, film.id, { status: 'completed', classification: 'strong_match', binaryId, supportedBits: 40, ...matched, report: JSON.stringify(report), createdAt: now, completedAt: now });
}

describe.each(['b', 'a'] as const)('the OpenAPI document of a Shape %s server', (shape) => {
  let t: TestApp;
  let doc: Json;
  let ops: Op[];
  const f = { orgId: '', apiKey: '', target: '', filmId: '', sessionId: '', viewerId: '', binaryId: '', caseId: '', invoiceId: '', subscriptionId: '', token: '' };

  beforeAll(async () => {
    // No DNS lookups for the examples' webhook URLs: the policy is not what is tested here.
    // The test send reaches a receiver that answers 204 (no network).
    const receiver = (async () => new Response(null, { status: 204 })) as unknown as typeof fetch;
    t = await makeTestApp('sqlite', { config: { allowPrivateWebhooks: true, apiShape: shape }, fetch: receiver });
    const res = await t.request('GET', '/openapi.json');
    expect(res.status).toBe(200);
    doc = (await res.json()) as Json;
    ops = Object.entries(doc.paths as Json).flatMap(([p, item]) => Object.entries(item as Json).map(([method, op]) => ({ method, path: p, op: op as Json })));

    const org = await registerOrg(t);
    await t.ctx.repos.organizations.update(org.organizationId, { rateLimitPerHour: 1_000_000 });
    const film = await addContent(t, { storagePath: 'not-packaged' });
    await license(t, org.organizationId, film.id);
    const session = (await (await t.request('POST', `/api/v1/stream/${film.id}`, { key: org.apiKey, body: { viewerId: 'openapi-viewer' } })).json()) as Json;
    await t.ctx.repos.forensicCases.insert(caseRow(org.organizationId, film.id, { status: 'failed', failureReason: 'fixture' }));
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
  });
  afterAll(() => t.close());

  /** A real value for each path parameter; `{id}` depends on the resource it names. */
  function realPath(p: string, method: string): string {
    const ids: Array<[RegExp, string]> = [
      [/^\/api\/v1\/admin\/organizations\/\{id\}/, f.target],
      [/^\/api\/v1\/admin\/content\/\{id\}/, f.filmId],
      [/^\/api\/v1\/stream\/\{id\}$/, method === 'post' ? f.filmId : f.sessionId],
      [/^\/api\/v1\/billing\/invoices\/\{id\}/, f.invoiceId],
      [/^\/api\/v1\/billing\/subscriptions\/\{id\}/, f.subscriptionId || randomUUID()],
      [/\{id\}/, randomUUID()],
    ];
    const id = ids.find(([re]) => re.test(p))?.[1] as string;
    return p
      .replace('{id}', id)
      .replace('{contentId}', f.filmId)
      .replace('{sessionId}', f.sessionId)
      .replace('{viewerId}', f.viewerId)
      .replace('{caseId}', f.caseId)
      .replace('{seg}', '0');
  }

  /** The credentials an operation's security asks for: a header, or the session in the query. */
  function credentials(op: Json): { headers: Record<string, string>; query: string } {
    const scheme = Object.keys(((op.security as Json[]) ?? [])[0] ?? {})[0];
    if (scheme === 'ApiKey') return { headers: { authorization: `Bearer ${f.apiKey}` }, query: '' };
    if (scheme === 'AdminToken') return { headers: { authorization: `Bearer ${f.token}` }, query: '' };
    if (scheme === 'ViewerSession') return { headers: {}, query: `session=${f.sessionId}` };
    return { headers: {}, query: '' };
  }

  /** Sends a request as the operation documents it, with its required query parameters. */
  async function send(o: Op, body?: unknown): Promise<Response> {
    const { headers, query } = credentials(o.op);
    const required = ((o.op.parameters ?? []) as Json[]).filter((p) => p.in === 'query' && p.required);
    const params = [query, ...required.map((p) => `${String(p.name)}=${p.name === 'binaryId' ? f.binaryId : 'x'}`)].filter(Boolean);
    const url = `${realPath(o.path, o.method)}${params.length > 0 ? `?${params.join('&')}` : ''}`;
    return t.request(o.method.toUpperCase(), url, { headers, body });
  }

  /** The answer is one the operation documents, and a JSON answer fits its schema. */
  async function expectDocumented(o: Op, res: Response): Promise<void> {
    const name = `${o.method.toUpperCase()} ${o.path}`;
    const responses = o.op.responses as Json;
    const documentedResponse = responses[String(res.status)] ?? responses.default;
    const text = await res.text();
    // Every operation documents 500; an answer of it is a failure here all the same.
    expect(res.status, `${name}: ${text.slice(0, 300)}`).not.toBe(500);
    expect(documentedResponse, `${name} answered ${res.status}, which it does not document: ${text.slice(0, 300)}`).toBeDefined();
    const content = (deref(doc, documentedResponse).content ?? {}) as Record<string, Json>;
    const base = (type: string | null) => type?.split(';')[0]?.trim();
    const types = Object.keys(content).map(base);
    if (types.length > 0) expect(types, `${name} ${res.status} answered ${res.headers.get('content-type')}`).toContain(base(res.headers.get('content-type')));
    const schema = content['application/json']?.schema as Json | undefined;
    if (!schema || !res.headers.get('content-type')?.startsWith('application/json')) return;
    expect(schemaProblems(doc, JSON.parse(text), schema), `${name} ${res.status}: ${text.slice(0, 300)}`).toEqual([]);
  }

  describe('drift from the routes', () => {
    it('documents every route hono registers, and registers every documented operation', () => {
      // Left out of the comparison: hono lists middleware (`app.use`) as method ALL; no route is
      // registered with `app.all` or `app.on` (checked below), so ALL entries are all middleware.
      const shape = (p: string) => p.replace(/:[^/]+/g, '{}').replace(/\{[^}]+\}/g, '{}');
      const registered = new Set(t.app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${shape(r.path)}`));
      const documented = new Set(ops.map((o) => `${o.method.toUpperCase()} ${shape(o.path)}`));
      expect([...registered].filter((r) => !documented.has(r)).sort(), 'registered but not documented').toEqual([]);
      expect([...documented].filter((d) => !registered.has(d)).sort(), 'documented but not registered').toEqual([]);
    });

    it('has no route registered for every method, whose methods the comparison could not see', () => {
      const dir = path.join(ROOT, 'server/routes');
      const files = [path.join(ROOT, 'server/app.ts'), ...fs.readdirSync(dir).map((n) => path.join(dir, n))];
      for (const file of files) expect(fs.readFileSync(file, 'utf8'), file).not.toMatch(/\.(all|on)\(/);
    });

    it('documents every error code with the status the core gives it', () => {
      for (const [code, { status }] of Object.entries(ERROR_CODES)) expect(new DrmError(code as ErrorCode, 'x').status, code).toBe(status);
    });
  });

  describe('security against the middleware', () => {
    const scheme = (o: Op) => Object.entries(((o.op.security as Json[]) ?? [])[0] ?? {})[0] as [string, string[]] | undefined;
    const rotationLast = (list: Op[]) => [...list.filter((o) => o.op.operationId !== 'rotateKey'), ...list.filter((o) => o.op.operationId === 'rotateKey')];
    const codeOf = async (res: Response) => (res.headers.get('content-type')?.startsWith('application/json') ? ((await res.json()) as Json).code : undefined);

    it('refuses a request without the documented credentials, and lets an open one through', async () => {
      for (const o of ops) {
        const name = `${o.method.toUpperCase()} ${o.path}`;
        const res = await t.request(o.method.toUpperCase(), realPath(o.path, o.method));
        const kind = scheme(o)?.[0];
        if (kind === 'ApiKey') await expectError(res, 401, 'INVALID_API_KEY');
        else if (kind === 'AdminToken') await expectError(res, 401, 'INVALID_ADMIN_TOKEN');
        // the session query is a parameter to the server: without it the request is malformed
        else if (kind === 'ViewerSession') await expectError(res, 400, 'BAD_REQUEST');
        else expect([401, 403], name).not.toContain(res.status);
      }
    });

    it('needs exactly the documented scope: refused without it, not refused for want of another', async () => {
      const keyed = ops.filter((o) => scheme(o)?.[0] === 'ApiKey');
      const keys = new Map<string, { only: string; allBut: string }>();
      for (const scope of SCOPES) {
        const only = (await registerOrg(t, { name: `Only ${scope}`, scopes: [scope] })).apiKey;
        const allBut = (await registerOrg(t, { name: `All but ${scope}`, scopes: SCOPES.filter((x) => x !== scope) })).apiKey;
        keys.set(scope, { only, allBut });
      }
      for (const o of rotationLast(keyed)) {
        const name = `${o.method.toUpperCase()} ${o.path}`;
        const scope = (scheme(o) as [string, string[]])[1][0];
        const { only, allBut } = keys.get(scope ?? 'catalog') as { only: string; allBut: string };
        const path = realPath(o.path, o.method);
        if (scope) await expectError(await t.request(o.method.toUpperCase(), path, { key: allBut }), 403, 'INSUFFICIENT_SCOPE');
        expect(await codeOf(await t.request(o.method.toUpperCase(), path, { key: only })), name).not.toBe('INSUFFICIENT_SCOPE');
      }
    });
  });

  describe('request bodies against the validators', () => {
    const jsonBodies = () => ops.filter((o) => (deref(doc, o.op.requestBody ?? {}).content as Json | undefined)?.['application/json']);
    const media = (o: Op) => ((deref(doc, o.op.requestBody).content as Json)['application/json'] as Json);

    it('refuses the documented example without each required field (400), and without every field of an anyOf/oneOf choice', async () => {
      let checked = 0;
      for (const o of jsonBodies()) {
        const schema = deref(doc, media(o).schema);
        const example = media(o).example as Json | undefined;
        if (!example) continue;
        const choices = [...((schema.anyOf ?? []) as Json[]), ...((schema.oneOf ?? []) as Json[])].flatMap((c) => (c.required ?? []) as string[]);
        const cases = [...((schema.required ?? []) as string[]).map((r) => [r]), ...(choices.length > 0 ? [choices] : [])];
        for (const fields of cases) {
          const res = await send(o, without(example, fields));
          await expectError(res, 400, 'BAD_REQUEST');
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(10);
    });

    it('accepts each documented example (not 400) and answers as documented', async () => {
      // The sign-in's example cannot carry a valid signature: a real one is signed here.
      const account = newAccount();
      const { grantAdmin } = await import('../../src/domain/admin/organizations.js');
      await grantAdmin(t.ctx, account.address);
      const message = await siweMessage(t, account);
      const real: Record<string, unknown> = { adminSignIn: { message, signature: await account.signMessage({ message }) } };
      for (const o of jsonBodies()) {
        const example = real[o.op.operationId as string] ?? media(o).example;
        if (example === undefined) continue;
        const res = await send(o, example);
        expect(res.status, `${o.method.toUpperCase()} ${o.path}: ${await res.clone().text()}`).not.toBe(400);
        await expectDocumented(o, res);
      }
    });

    it('POST /forensics/analyze refuses a form without each required field (400)', async () => {
      // A valid leak needs real media and an analysis: the accepted case is forensics.test.ts's.
      const o = ops.find((x) => x.op.operationId === 'analyzeLeak') as Op;
      const schema = deref(doc, ((deref(doc, o.op.requestBody).content as Json)['multipart/form-data'] as Json).schema);
      const values: Record<string, string | Blob> = { file: new Blob([Buffer.alloc(1024)]), contentId: f.filmId, contentType: 'video' };
      for (const missing of schema.required as string[]) {
        const form = new FormData();
        for (const [k, v] of Object.entries(values)) {
          if (k === missing) continue;
          if (typeof v === 'string') form.append(k, v);
          else form.append(k, v, 'leak.ts');
        }
        const res = await t.app.request('/api/v1/forensics/analyze', { method: 'POST', headers: { authorization: `Bearer ${f.apiKey}` }, body: form });
        await expectError(res, 400, 'BAD_REQUEST');
      }
    });
  });

  describe('query parameters against the validators', () => {
    /** Values the parameter's schema refuses, and one it allows. */
    function values(schema: Json): { refused: string[]; allowed: string } {
      if (Array.isArray(schema.enum)) return { refused: ['maybe'], allowed: String(schema.enum[0]) };
      if (schema.type === 'integer') {
        const refused = [schema.minimum, schema.maximum].flatMap((b, i) => (typeof b === 'number' ? [String(i === 0 ? b - 1 : b + 1)] : []));
        return { refused: [...refused, '1.5', 'abc'], allowed: String(schema.maximum ?? schema.minimum ?? 1) };
      }
      if (schema.format === 'uuid') return { refused: ['not-a-uuid'], allowed: randomUUID() };
      if (typeof schema.pattern === 'string') return { refused: ['x'], allowed: f.binaryId };
      return { refused: [], allowed: 'x' };
    }

    it('refuses a value outside each documented query parameter (400) and accepts one inside it', async () => {
      let checked = 0;
      for (const o of ops.filter((x) => x.method === 'get' || x.op.operationId === 'adminDeleteContent')) {
        for (const p of ((o.op.parameters ?? []) as Json[]).filter((x) => x.in === 'query')) {
          const { refused, allowed } = values(p.schema as Json);
          const others = ((o.op.parameters ?? []) as Json[]).filter((x) => x.in === 'query' && x.required && x.name !== p.name);
          const rest = others.map((x) => `&${String(x.name)}=${values(x.schema as Json).allowed}`).join('');
          const { headers } = credentials(o.op);
          const url = (v: string) => `${realPath(o.path, o.method)}?${String(p.name)}=${v}${rest}`;
          const name = `${o.method.toUpperCase()} ${o.path} ${String(p.name)}`;
          for (const v of refused) await expectError(await t.request(o.method.toUpperCase(), url(v), { headers }), 400, 'BAD_REQUEST');
          // the force=true of a content delete is left to admin-content.test.ts: here it would end sessions
          if (o.op.operationId === 'adminDeleteContent') continue;
          expect((await t.request(o.method.toUpperCase(), url(allowed), { headers })).status, `${name}=${allowed}`).not.toBe(400);
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(15);
    });
  });

  describe('responses against the document', () => {
    it('answers every GET as documented, and a JSON answer fits its schema with no undocumented field', async () => {
      for (const o of ops.filter((x) => x.method === 'get')) await expectDocumented(o, await send(o));
    });

    it('would catch a response that drifted: an undocumented field, a wrong type, a missing field', async () => {
      const o = ops.find((x) => x.op.operationId === 'getViewer') as Op;
      const body = (await (await send(o)).json()) as Json;
      const schema = (deref(doc, (o.op.responses as Json)['200']).content as Record<string, Json>)['application/json']?.schema as Json;
      expect(schemaProblems(doc, body, schema)).toEqual([]);
      expect(schemaProblems(doc, { ...body, surprise: 1 }, schema)).toEqual(['$.surprise: not documented']);
      expect(schemaProblems(doc, { ...body, totalStreams: 'many' }, schema)).toEqual(['$.totalStreams: string, not integer']);
      expect(schemaProblems(doc, without(body, ['binaryId']), schema)).toEqual(['$.binaryId: missing']);
    });

    it('answers every operation without a body as documented (rotation last: it revokes the key)', async () => {
      const subscriptions = (await (await t.request('GET', '/api/v1/billing/subscriptions', { key: f.apiKey })).json()) as { subscriptions: Json[] };
      f.subscriptionId = subscriptions.subscriptions[0]?.id as string;
      const bodiless = ops.filter((x) => x.method !== 'get' && !x.op.requestBody);
      const rotate = bodiless.filter((x) => x.op.operationId === 'rotateKey');
      for (const o of [...bodiless.filter((x) => !rotate.includes(x)), ...rotate]) await expectDocumented(o, await send(o));
    });
  });

  describe('events against the document', () => {
    it('sends every event it recorded above in the documented webhook shape', async () => {
      const rows = [...(await t.ctx.repos.webhookDeliveries.listForOrg(f.orgId, 100)), ...(await t.ctx.repos.webhookDeliveries.listForOrg(f.target, 100))];
      const webhooks = doc.webhooks as Record<string, { post: Json }>;
      for (const row of rows) {
        const op = webhooks[row.eventType]?.post as Json;
        expect(op, `event ${row.eventType} is not documented`).toBeDefined();
        const schema = ((op.requestBody as Json).content as Record<string, Json>)['application/json']?.schema as Json;
        expect(schemaProblems(doc, JSON.parse(row.body), schema), row.eventType).toEqual([]);
      }
      const seen = new Set(rows.map((r) => r.eventType));
      for (const type of ['viewer.created', 'viewer.stream', 'viewer.blocked', 'organization.suspended', 'webhook.test', 'invoice.issued']) expect(seen).toContain(type);
    });
  });

  describe('structure', () => {
    it('is OpenAPI 3.1: every operation has responses, every $ref resolves, operationIds are unique (both API shapes)', () => {
      expect(structuralProblems(doc)).toEqual([]);
      expect(structuralProblems(openApiDocument({ shape: 'a', version: '0.0.0', publicUrl: 'https://drm.example.com/' }) as unknown as Json)).toEqual([]);
    });

    it("names package.json's version, and is served open and cacheable", async () => {
      const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
      expect((doc.info as Json).version).toBe(pkg.version);
      const res = await t.request('GET', '/openapi.json');
      expect(res.headers.get('cache-control')).toMatch(/^public/);
      const tag = res.headers.get('etag') as string;
      expect(tag).toBeTruthy();
      expect((await t.request('GET', '/openapi.json', { headers: { 'if-none-match': tag } })).status).toBe(304);
    });

    it('documents the spec error body for every error response', () => {
      // /ready's 503 is the readiness body that says what is missing, not an error.
      for (const o of ops.filter((x) => x.op.operationId !== 'ready')) {
        for (const [status, r] of Object.entries(o.op.responses as Json)) {
          if (!/^[45]/.test(status)) continue;
          const schema = (deref(doc, r).content as Record<string, Json>)['application/json']?.schema as Json;
          expect(schema, `${o.method} ${o.path} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
        }
      }
    });
  });
});
