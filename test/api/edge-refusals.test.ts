import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type RunningServer, startServer } from '../../server/listen.js';
import { ManualClock } from '../../src/clock.js';
import { resolveConfig } from '../../src/config.js';
import { createContext } from '../../src/create-context.js';
import { createLogger } from '../../src/log.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { registerOrg } from '../helpers/fixtures.js';
import { rawRequest } from '../helpers/raw-request.js';

// Answers given before any route runs. Over a socket: what Node's HTTP parser refuses, and a
// CONNECT (a 400 in the spec's body, then the connection closed, never silence). Through the app:
// a too-large body and an unknown path, which with a valid key carry the rate-limit headers too.

describe('drm serve over a socket', () => {
  let dir: string;
  let server: RunningServer;
  const lines: string[] = [];
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-edge-'));
    const config = { ...resolveConfig({ dataDir: dir, logLevel: 'silent' }, {}), port: 0, host: '127.0.0.1' };
    const log = createLogger('info', (l) => lines.push(l));
    server = await startServer(await createContext(config, { clock: new ManualClock(), log }));
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const badRequest = { error: expect.any(String), code: 'BAD_REQUEST', status: 400 };

  it('answers a malformed chunked body with 400 and closes the connection', async () => {
    const request = [
      'POST /api/v1/auth/register HTTP/1.1',
      'Host: x',
      'Content-Type: application/json',
      'Transfer-Encoding: chunked',
      '',
      'zz\r\n{"name":"x"}\r\n0\r\n\r\n',
    ].join('\r\n');
    const answer = await rawRequest(server.port, request);
    expect(answer).toEqual({ status: 400, json: badRequest });
    // The app's handler, whose body was cut off under it, ends as the client's fault: no error logged.
    await vi.waitFor(() => expect(lines.some((l) => l.includes('/api/v1/auth/register'))).toBe(true));
    expect(lines.filter((l) => JSON.parse(l).level === 'error')).toEqual([]);
  });

  it('answers HEAD with the headers GET has: the request id, and a keyed refusal before any route its rate headers', async () => {
    const org = await (
      await fetch(`${server.url}/api/v1/auth/register`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Head Films' }),
      })
    ).json();
    const headers = { authorization: `Bearer ${org.apiKey}` };
    for (const path of ['/api/v1/no-such-route', '/api/v1/auth/verify']) {
      const res = await fetch(`${server.url}${path}`, { method: 'HEAD', headers });
      expect(res.headers.get('x-request-id'), path).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.headers.get('x-ratelimit-limit'), path).toBe('1000');
    }
    const metrics = await fetch(`${server.url}/metrics`, { method: 'HEAD' });
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('takes two Authorization headers for no key, not for the first one', async () => {
    const register = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":"Twice"}' };
    const { apiKey } = await (await fetch(`${server.url}/api/v1/auth/register`, register)).json();
    const request = (auth: string[]) =>
      [
        'GET /api/v1/auth/verify HTTP/1.1',
        'Host: x',
        ...auth.map((a) => `Authorization: ${a}`),
        'Connection: close',
        '',
      ]
        .join('\r\n')
        .concat('\r\n');
    expect((await rawRequest(server.port, request([`Bearer ${apiKey}`]))).status).toBe(200);
    const twice = await rawRequest(server.port, request([`Bearer ${apiKey}`, 'Bearer drm_live_someoneelse']));
    expect(twice).toEqual({ status: 401, json: { error: expect.any(String), code: 'INVALID_API_KEY', status: 401 } });
  });

  it('answers CONNECT with 400 and closes the connection', async () => {
    const answer = await rawRequest(server.port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n');
    expect(answer).toEqual({ status: 400, json: badRequest });
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });
});

describe.each(DIALECTS)('refusals before the route on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect, { config: { maxJsonBytes: 1024 } });
  });
  afterAll(() => t.close());

  /** X-RateLimit-Limit, -Remaining and -Reset as sent (null when absent). */
  const rateHeaders = (res: Response) =>
    ['Limit', 'Remaining', 'Reset'].map((n) => res.headers.get(`X-RateLimit-${n}`));
  /** what a new organization's first counted request shows: its plan's 1,000 an hour, one used */
  const firstCounted = ['1000', '999', expect.stringMatching(/^\d+$/)];

  it('a keyed body over the size limit is 413 with the rate-limit headers, counted once', async () => {
    const org = await registerOrg(t);
    const body = JSON.stringify({ name: 'x'.repeat(2048) });
    const headers = { 'content-length': String(body.length) };
    const res = await t.request('PUT', '/api/v1/webhook', { key: org.apiKey, body, headers });
    expect(res.status).toBe(413);
    expect(rateHeaders(res)).toEqual(firstCounted);
  });

  it('a keyed request to an unknown route is 404 with the rate-limit headers; without a key it has none', async () => {
    const org = await registerOrg(t);
    const res = await t.request('GET', '/api/v1/no-such-thing', { key: org.apiKey });
    expect(res.status).toBe(404);
    expect(rateHeaders(res)).toEqual(firstCounted);
    const anonymous = await t.request('GET', '/api/v1/no-such-thing');
    expect(rateHeaders(anonymous)).toEqual([null, null, null]);
  });
});
