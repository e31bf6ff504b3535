import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../../server/openapi/document.js';
import { deref, schemaProblems, structuralProblems } from '../helpers/openapi.js';
import {
  expectDocumented,
  type Json,
  type Op,
  type OpenApiFixture,
  ROOT,
  send,
  sendExamples,
  useOpenApiFixture,
  without,
} from '../helpers/openapi-fixture.js';

// GET /openapi.json describes every endpoint, and these checks keep the description from
// drifting from the code, for a server of each API shape: what the server
// answers is a status the operation documents, in its media type, and a JSON answer fits the
// documented schema with no undocumented field; the same for the webhook events; and the document
// is well formed. The routes, the security and the validators are openapi-drift.test.ts's. SQLite
// only: the document does not depend on the dialect, and the other API suites run the routes on both.

type Suite = { fx: OpenApiFixture };

function responsesAgainstTheDocument(s: Suite): void {
  it('answers every GET as documented, and a JSON answer fits its schema with no undocumented field', async () => {
    for (const o of s.fx.ops.filter((x) => x.method === 'get')) await expectDocumented(s.fx, o, await send(s.fx, o));
  });

  it('would catch a response that drifted: an undocumented field, a wrong type, a missing field', async () => {
    const { doc, ops } = s.fx;
    const o = ops.find((x) => x.op.operationId === 'getViewer') as Op;
    const body = (await (await send(s.fx, o)).json()) as Json;
    const schema = (deref(doc, (o.op.responses as Json)['200']).content as Record<string, Json>)['application/json']
      ?.schema as Json;
    expect(schemaProblems(doc, body, schema)).toEqual([]);
    expect(schemaProblems(doc, { ...body, surprise: 1 }, schema)).toEqual(['$.surprise: not documented']);
    expect(schemaProblems(doc, { ...body, totalStreams: 'many' }, schema)).toEqual([
      '$.totalStreams: string, not integer',
    ]);
    expect(schemaProblems(doc, without(body, ['binaryId']), schema)).toEqual(['$.binaryId: missing']);
  });

  it('answers every operation without a body as documented (rotation last: it revokes the key)', async () => {
    const { t, ops, f } = s.fx;
    const subscriptions = (await (
      await t.request('GET', '/api/v1/billing/subscriptions', { key: f.apiKey })
    ).json()) as { subscriptions: Json[] };
    f.subscriptionId = subscriptions.subscriptions[0]?.id as string;
    const bodiless = ops.filter((x) => x.method !== 'get' && !x.op.requestBody);
    const rotate = bodiless.filter((x) => x.op.operationId === 'rotateKey');
    for (const o of [...bodiless.filter((x) => !rotate.includes(x)), ...rotate])
      await expectDocumented(s.fx, o, await send(s.fx, o));
  });
}

function eventsAgainstTheDocument(s: Suite): void {
  it('sends every event it recorded above in the documented webhook shape', async () => {
    const { t, doc, f } = s.fx;
    const rows = [
      ...(await t.ctx.repos.webhookDeliveries.listForOrg(f.orgId, 100)),
      ...(await t.ctx.repos.webhookDeliveries.listForOrg(f.target, 100)),
    ];
    const webhooks = doc.webhooks as Record<string, { post: Json }>;
    for (const row of rows) {
      const op = webhooks[row.eventType]?.post as Json;
      expect(op, `event ${row.eventType} is not documented`).toBeDefined();
      const schema = ((op.requestBody as Json).content as Record<string, Json>)['application/json']?.schema as Json;
      expect(schemaProblems(doc, JSON.parse(row.body), schema), row.eventType).toEqual([]);
    }
    const seen = new Set(rows.map((r) => r.eventType));
    for (const type of [
      'viewer.created',
      'viewer.stream',
      'viewer.blocked',
      'organization.suspended',
      'webhook.test',
      'invoice.issued',
    ])
      expect(seen).toContain(type);
  });
}

function structure(s: Suite): void {
  it('is OpenAPI 3.1: every operation has responses, every $ref resolves, operationIds are unique (both API shapes)', () => {
    expect(structuralProblems(s.fx.doc)).toEqual([]);
    expect(
      structuralProblems(
        openApiDocument({ shape: 'a', version: '0.0.0', publicUrl: 'https://drm.example.com/' }) as unknown as Json,
      ),
    ).toEqual([]);
  });

  it("names package.json's version, and is served open and cacheable", async () => {
    const { t, doc } = s.fx;
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect((doc.info as Json).version).toBe(pkg.version);
    const res = await t.request('GET', '/openapi.json');
    expect(res.headers.get('cache-control')).toMatch(/^public/);
    const tag = res.headers.get('etag') as string;
    expect(tag).toBeTruthy();
    expect((await t.request('GET', '/openapi.json', { headers: { 'if-none-match': tag } })).status).toBe(304);
  });

  it('documents the spec error body for every error response', () => {
    const { doc, ops } = s.fx;
    // /ready's 503 is the readiness body that says what is missing, not an error.
    for (const o of ops.filter((x) => x.op.operationId !== 'ready')) {
      for (const [status, r] of Object.entries(o.op.responses as Json)) {
        if (!/^[45]/.test(status)) continue;
        const schema = (deref(doc, r).content as Record<string, Json>)['application/json']?.schema as Json;
        expect(schema, `${o.method} ${o.path} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
      }
    }
  });
}

describe.each(['b', 'a'] as const)('the OpenAPI document of a Shape %s server', (shape) => {
  // The documented examples, sent as openapi-drift.test.ts sends and checks them: what they make
  // (a webhook endpoint, a subscription, a blocked viewer, a suspended organization) is what the
  // operations without a body act on and what the events below are sent for.
  const s = useOpenApiFixture(shape, (fx) => sendExamples(fx, async (_o, res) => void (await res.text())));
  describe('responses against the document', () => responsesAgainstTheDocument(s));
  describe('events against the document', () => eventsAgainstTheDocument(s));
  describe('structure', () => structure(s));
});
