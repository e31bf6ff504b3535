import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../server/app.js';
import type { Context } from '../../src/context.js';
import { createContext } from '../../src/create-context.js';
import { createLogger } from '../../src/log.js';
import { billedOrg, stream } from '../helpers/billing.js';
import { makeTestApp, type TestApp } from '../helpers/context.js';

// One access-log line per request at info level (method, route pattern,
// status, duration, request id), never a key, an id from the path or the session query; JSON for
// collectors and a readable line for a terminal.

describe('the access log', () => {
  let t: TestApp;
  let ctx: Context;
  const lines: string[] = [];
  beforeAll(async () => {
    t = await makeTestApp('sqlite');
    ctx = await createContext(t.ctx.config, { clock: t.clock, log: createLogger('info', (l) => lines.push(l)) });
  });
  afterAll(async () => {
    await ctx.db.close();
    await t.close();
  });

  it('writes one JSON line per request with the route pattern and the request id it answers with', async () => {
    const app = createApp(ctx);
    const org = await billedOrg(t);
    const sessionId = await stream(t, org.apiKey, org.content);
    lines.length = 0;
    const res = await app.request(`/api/v1/stream/sessions/${sessionId}`, {
      headers: { authorization: `Bearer ${org.apiKey}`, 'x-request-id': 'lb-7f3a' },
    });
    const keyed = await app.request('/api/v1/auth/verify', {
      headers: { authorization: `Bearer ${org.apiKey}`, 'x-request-id': 'not a token!' },
    });
    const access = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(access).toEqual([
      expect.objectContaining({
        level: 'info',
        method: 'GET',
        route: '/api/v1/stream/sessions/:sessionId',
        status: 200,
        requestId: 'lb-7f3a',
        ms: expect.any(Number),
      }),
      expect.objectContaining({
        route: '/api/v1/auth/verify',
        status: 200,
        requestId: keyed.headers.get('x-request-id'),
      }),
    ]);
    expect(res.headers.get('x-request-id')).toBe('lb-7f3a');
    expect(keyed.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const all = lines.join('');
    for (const secret of [org.apiKey, sessionId]) expect(all).not.toContain(secret);
  });

  it('reads as one line for a person at a terminal', () => {
    const out: string[] = [];
    createLogger('info', (l) => out.push(l), 'pretty').info('request', {
      method: 'GET',
      route: '/api/v1/catalog',
      status: 200,
      ms: 1.5,
    });
    expect(out[0]).toMatch(
      /^\d\d:\d\d:\d\d\.\d{3} INFO {2}request method=GET route=\/api\/v1\/catalog status=200 ms=1.5\n$/,
    );
  });
});
