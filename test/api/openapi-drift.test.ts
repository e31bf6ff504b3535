import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../server/openapi/components.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { DrmError, type ErrorCode } from '../../src/errors.js';
import { expectError } from '../helpers/expect-error.js';
import { registerOrg } from '../helpers/fixtures.js';
import { deref } from '../helpers/openapi.js';
import {
  credentials,
  expectDocumented,
  type Json,
  jsonBodies,
  media,
  type Op,
  type OpenApiFixture,
  ROOT,
  realPath,
  send,
  sendExamples,
  useOpenApiFixture,
  without,
} from '../helpers/openapi-fixture.js';

// GET /openapi.json describes every endpoint, and these checks keep the description from
// drifting from the code, for a server of each API shape:
// - the routes hono registers and the documented operations are the same set;
// - the documented security is what the middleware asks (no credentials: refused; the scope named
//   and no other);
// - every required field of a documented JSON body is required by the validators (the example
//   without it is 400), and the documented example is accepted; query parameters likewise.
// What the server answers, and the webhook events it sends, are openapi-answers.test.ts's.
// Only the route comparison reaches two operations: the card processor's event (it needs the
// processor's signature; card-funding.test.ts sends real ones) and an accepted leak upload (it
// needs real media and an analysis; forensics.test.ts). SQLite only: the document and the
// validators do not depend on the dialect, and the other API suites run the routes on both.

type Suite = { fx: OpenApiFixture };

function driftFromTheRoutes(s: Suite): void {
  it('documents every route hono registers, and registers every documented operation', () => {
    const { t, ops } = s.fx;
    // Left out of the comparison: hono lists middleware (`app.use`) as method ALL; no route is
    // registered with `app.all` or `app.on` (checked below), so ALL entries are all middleware.
    const shape = (p: string) => p.replace(/:[^/]+/g, '{}').replace(/\{[^}]+\}/g, '{}');
    const registered = new Set(
      t.app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${shape(r.path)}`),
    );
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
    for (const [code, { status }] of Object.entries(ERROR_CODES))
      expect(new DrmError(code as ErrorCode, 'x').status, code).toBe(status);
  });
}

function securityAgainstTheMiddleware(s: Suite): void {
  const scheme = (o: Op) =>
    Object.entries(((o.op.security as Json[]) ?? [])[0] ?? {})[0] as [string, string[]] | undefined;
  const rotationLast = (list: Op[]) => [
    ...list.filter((o) => o.op.operationId !== 'rotateKey'),
    ...list.filter((o) => o.op.operationId === 'rotateKey'),
  ];
  const codeOf = async (res: Response) =>
    res.headers.get('content-type')?.startsWith('application/json') ? ((await res.json()) as Json).code : undefined;

  it('refuses a request without the documented credentials, and lets an open one through', async () => {
    const { t, ops } = s.fx;
    for (const o of ops) {
      const name = `${o.method.toUpperCase()} ${o.path}`;
      const res = await t.request(o.method.toUpperCase(), realPath(s.fx, o.path, o.method));
      const kind = scheme(o)?.[0];
      if (kind === 'ApiKey') await expectError(res, 401, 'INVALID_API_KEY');
      else if (kind === 'AdminToken') await expectError(res, 401, 'INVALID_ADMIN_TOKEN');
      // the session query is a parameter to the server: without it the request is malformed
      else if (kind === 'ViewerSession') await expectError(res, 400, 'BAD_REQUEST');
      else expect([401, 403], name).not.toContain(res.status);
    }
  });

  it('needs exactly the documented scope: refused without it, not refused for want of another', async () => {
    const { t, ops } = s.fx;
    const keyed = ops.filter((o) => scheme(o)?.[0] === 'ApiKey');
    const keys = new Map<string, { only: string; allBut: string }>();
    for (const scope of SCOPES) {
      const only = (await registerOrg(t, { name: `Only ${scope}`, scopes: [scope] })).apiKey;
      const allBut = (await registerOrg(t, { name: `All but ${scope}`, scopes: SCOPES.filter((x) => x !== scope) }))
        .apiKey;
      keys.set(scope, { only, allBut });
    }
    for (const o of rotationLast(keyed)) {
      const name = `${o.method.toUpperCase()} ${o.path}`;
      const scope = (scheme(o) as [string, string[]])[1][0];
      const { only, allBut } = keys.get(scope ?? 'catalog') as { only: string; allBut: string };
      const path = realPath(s.fx, o.path, o.method);
      if (scope)
        await expectError(await t.request(o.method.toUpperCase(), path, { key: allBut }), 403, 'INSUFFICIENT_SCOPE');
      expect(await codeOf(await t.request(o.method.toUpperCase(), path, { key: only })), name).not.toBe(
        'INSUFFICIENT_SCOPE',
      );
    }
  });
}

function requestBodiesAgainstTheValidators(s: Suite): void {
  it('refuses the documented example without each required field (400), and without every field of an anyOf/oneOf choice', async () => {
    const { doc } = s.fx;
    let checked = 0;
    for (const o of jsonBodies(s.fx)) {
      const schema = deref(doc, media(s.fx, o).schema);
      const example = media(s.fx, o).example as Json | undefined;
      if (!example) continue;
      const choices = [...((schema.anyOf ?? []) as Json[]), ...((schema.oneOf ?? []) as Json[])].flatMap(
        (c) => (c.required ?? []) as string[],
      );
      const cases = [
        ...((schema.required ?? []) as string[]).map((r) => [r]),
        ...(choices.length > 0 ? [choices] : []),
      ];
      for (const fields of cases) {
        const res = await send(s.fx, o, without(example, fields));
        await expectError(res, 400, 'BAD_REQUEST');
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('accepts each documented example (not 400) and answers as documented', async () => {
    await sendExamples(s.fx, async (o, res) => {
      expect(res.status, `${o.method.toUpperCase()} ${o.path}: ${await res.clone().text()}`).not.toBe(400);
      await expectDocumented(s.fx, o, res);
    });
  });

  it('POST /forensics/analyze refuses a form without each required field (400)', async () => {
    const { t, doc, ops, f } = s.fx;
    // A valid leak needs real media and an analysis: the accepted case is forensics.test.ts's.
    const o = ops.find((x) => x.op.operationId === 'analyzeLeak') as Op;
    const schema = deref(doc, ((deref(doc, o.op.requestBody).content as Json)['multipart/form-data'] as Json).schema);
    const values: Record<string, string | Blob> = {
      file: new Blob([Buffer.alloc(1024)]),
      contentId: f.filmId,
      contentType: 'video',
    };
    for (const missing of schema.required as string[]) {
      const form = new FormData();
      for (const [k, v] of Object.entries(values)) {
        if (k === missing) continue;
        if (typeof v === 'string') form.append(k, v);
        else form.append(k, v, 'leak.ts');
      }
      const res = await t.app.request('/api/v1/forensics/analyze', {
        method: 'POST',
        headers: { authorization: `Bearer ${f.apiKey}` },
        body: form,
      });
      await expectError(res, 400, 'BAD_REQUEST');
    }
  });
}

function queryParametersAgainstTheValidators(s: Suite): void {
  /** Values the parameter's schema refuses, and one it allows. */
  function values(schema: Json): { refused: string[]; allowed: string } {
    if (Array.isArray(schema.enum)) return { refused: ['maybe'], allowed: String(schema.enum[0]) };
    if (schema.type === 'integer') {
      const refused = [schema.minimum, schema.maximum].flatMap((b, i) =>
        typeof b === 'number' ? [String(i === 0 ? b - 1 : b + 1)] : [],
      );
      return { refused: [...refused, '1.5', 'abc'], allowed: String(schema.maximum ?? schema.minimum ?? 1) };
    }
    if (schema.format === 'uuid') return { refused: ['not-a-uuid'], allowed: randomUUID() };
    if (typeof schema.pattern === 'string') return { refused: ['x'], allowed: s.fx.f.binaryId };
    return { refused: [], allowed: 'x' };
  }

  it('refuses a value outside each documented query parameter (400) and accepts one inside it', async () => {
    const { t, ops } = s.fx;
    let checked = 0;
    for (const o of ops.filter((x) => x.method === 'get' || x.op.operationId === 'adminDeleteContent')) {
      for (const p of ((o.op.parameters ?? []) as Json[]).filter((x) => x.in === 'query')) {
        const { refused, allowed } = values(p.schema as Json);
        const others = ((o.op.parameters ?? []) as Json[]).filter(
          (x) => x.in === 'query' && x.required && x.name !== p.name,
        );
        const rest = others.map((x) => `&${String(x.name)}=${values(x.schema as Json).allowed}`).join('');
        const { headers } = credentials(s.fx, o.op);
        const url = (v: string) => `${realPath(s.fx, o.path, o.method)}?${String(p.name)}=${v}${rest}`;
        const name = `${o.method.toUpperCase()} ${o.path} ${String(p.name)}`;
        for (const v of refused)
          await expectError(await t.request(o.method.toUpperCase(), url(v), { headers }), 400, 'BAD_REQUEST');
        // the force=true of a content delete is left to admin-content.test.ts: here it would end sessions
        if (o.op.operationId === 'adminDeleteContent') continue;
        expect(
          (await t.request(o.method.toUpperCase(), url(allowed), { headers })).status,
          `${name}=${allowed}`,
        ).not.toBe(400);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(15);
  });
}

describe.each(['b', 'a'] as const)('the OpenAPI document of a Shape %s server', (shape) => {
  const s = useOpenApiFixture(shape);
  describe('drift from the routes', () => driftFromTheRoutes(s));
  describe('security against the middleware', () => securityAgainstTheMiddleware(s));
  describe('request bodies against the validators', () => requestBodiesAgainstTheValidators(s));
  describe('query parameters against the validators', () => queryParametersAgainstTheValidators(s));
});
