import Database from 'better-sqlite3';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../helpers/context.js';
import { killAll, runDrm, type ServeProcess, startServe } from '../helpers/serve-process.js';
import { rawRequest } from '../helpers/raw-request.js';

// The real `drm serve` in a child process, spoken to over real sockets. Start-up compiles the
// sources through tsx, so the timeouts are generous; nothing here waits on a sleep.

const T = 180_000;
const dirs: string[] = [];
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-e2e-'));
  dirs.push(dir);
  return dir;
};

afterAll(() => {
  killAll();
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

async function register(url: string, name: string) {
  const res = await fetch(`${url}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, email: 'ops@example.test' }),
  });
  expect(res.status).toBe(201);
  return (await res.json()) as { organizationId: string; apiKey: string };
}

/** A POST whose JSON body arrives in two parts: between them the caller does what it likes. */
function slowPost(
  url: string,
  body: string,
  between: () => Promise<void>,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    // A keep-alive agent: the client asks to keep the connection, so a `Connection: close` in the
    // answer is the server's doing.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const req = http.request(url, {
      method: 'POST',
      agent,
      headers: {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(body),
        // The server answers 100 Continue once it has the request line and headers: from then
        // on the request is in flight in the server, not waiting in a socket buffer.
        expect: '100-continue',
      },
    });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (text += d));
      res.on('end', () => {
        agent.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text });
      });
      res.on('error', reject);
    });
    req.once('continue', () => {
      const half = Math.floor(body.length / 2);
      req.write(body.slice(0, half), () => {
        between().then(() => req.end(body.slice(half)), reject);
      });
    });
  });
}

describe('drm serve on SQLite, over HTTP', () => {
  let dir: string;
  let server: ServeProcess;

  beforeAll(async () => {
    dir = tempDir();
    server = await startServe({ dataDir: dir });
  }, T);
  afterAll(async () => {
    await server?.stop();
  }, T);

  it('prints where it listens as one JSON line', () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}`);
    expect(server.port).toBeGreaterThan(0);
    expect(server.db).toBe('sqlite');
    expect(fs.existsSync(path.join(dir, 'drm.db'))).toBe(true);
  });

  it('registers, verifies with the key and rate-limit headers, and lists the catalog', async () => {
    const reg = await register(server.url, 'Acme Films');
    expect(reg.apiKey).toMatch(/^drm_live_[0-9A-Za-z]{32,}$/);

    const verify = await fetch(`${server.url}/api/v1/auth/verify`, {
      headers: { authorization: `Bearer ${reg.apiKey}` },
    });
    expect(verify.status).toBe(200);
    expect(verify.headers.get('content-type')).toMatch(/^application\/json/);
    expect(verify.headers.get('x-ratelimit-limit')).toBe('1000');
    expect(verify.headers.get('x-ratelimit-remaining')).toBe('999');
    const reset = Number(verify.headers.get('x-ratelimit-reset'));
    expect(reset % 3600).toBe(0);
    expect(reset).toBeGreaterThan(Date.now() / 1000);
    expect(reset).toBeLessThanOrEqual(Date.now() / 1000 + 3600);
    const body = await verify.json();
    expect(body.organization).toMatchObject({ id: reg.organizationId, name: 'Acme Films', isActive: true });

    const catalog = await fetch(`${server.url}/api/v1/catalog`, { headers: { authorization: `Bearer ${reg.apiKey}` } });
    expect(catalog.status).toBe(200);
    expect(catalog.headers.get('x-ratelimit-remaining')).toBe('998');
    expect(await catalog.json()).toMatchObject({ content: [], page: 1 });

    const anonymous = await fetch(`${server.url}/api/v1/catalog`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ code: 'INVALID_API_KEY', status: 401 });
  });

  it('answers an unknown route with a 404 JSON body', async () => {
    const res = await fetch(`${server.url}/api/v1/no-such-thing?x=1`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({
      error: expect.stringContaining('/api/v1/no-such-thing'),
      code: 'NOT_FOUND',
      status: 404,
    });
  });

  it('answers a request line or headers over the limits with 431 and a malformed request with 400, in the spec body', async () => {
    const long = `GET /api/v1/catalog?x=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`;
    const bigHeader = `GET /api/v1/catalog HTTP/1.1\r\nHost: x\r\nX-Filler: ${'b'.repeat(20_000)}\r\n\r\n`;
    for (const request of [long, bigHeader]) {
      const answer = await rawRequest(server.port, request);
      expect(answer.status).toBe(431);
      expect(answer.json).toEqual({ error: expect.any(String), code: 'REQUEST_HEADERS_TOO_LARGE', status: 431 });
    }
    const garbled = await rawRequest(server.port, 'NOT AN HTTP REQUEST\r\n\r\n');
    expect(garbled.status).toBe(400);
    expect(garbled.json).toEqual({ error: 'malformed HTTP request', code: 'BAD_REQUEST', status: 400 });
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it(
    'says at once that it starts, that it creates a new deployment only when it does, and then where it listens',
    async () => {
      expect(server.stderr().split('\n')[0]).toBe(
        `drm serve: starting, creating a new deployment in ${dir} (no database there yet)`,
      );
      const again = await startServe({ dataDir: dir });
      try {
        expect(again.stderr().split('\n')[0]).toMatch(
          new RegExp(`^drm serve: starting on the deployment in ${dir} \\(database `),
        );
        expect(again.stderr()).not.toMatch(/creating a new deployment/);
      } finally {
        await again.stop();
      }
    },
    T,
  );

  it(
    'reads every setting from its environment variable: DRM_WEBHOOK_WORKER=0 turns the worker off, DRM_TRUST_PROXY=yes trusts the proxy; a flag wins',
    async () => {
      const env = { DRM_WEBHOOK_WORKER: '0', DRM_TRUST_PROXY: 'yes' };
      const fromEnv = await startServe({ dataDir: dir, env });
      const flagWins = await startServe({ dataDir: dir, env, args: ['--webhook-worker', '--trust-proxy', 'no'] });
      try {
        expect(fromEnv.info).toMatchObject({ webhookWorker: false, trustProxy: true });
        expect(flagWins.info).toMatchObject({ webhookWorker: true, trustProxy: false });
      } finally {
        await Promise.all([fromEnv.stop(), flagWins.stop()]);
      }
      const bad = await runDrm(['serve', '--port', '0', '--data-dir', dir], { DRM_WEBHOOK_WORKER: 'maybe' });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toMatch(/DRM_WEBHOOK_WORKER.*must be yes or no/);
    },
    T,
  );

  it(
    'a second drm serve on the same port fails with one clear line and a non-zero exit',
    async () => {
      const second = await runDrm(['serve', '--port', String(server.port), '--data-dir', dir, '--log-level', 'warn']);
      expect(second.code).not.toBe(0);
      expect(second.stdout).toBe('');
      // the line said at once, then the one refusal
      const lines = second.stderr.trim().split('\n');
      expect(lines).toHaveLength(2);
      expect(lines[0]).toMatch(/^drm serve: starting on the deployment in /);
      expect(lines[1]).toMatch(/^drm: .*already in use/);
      expect(lines[1]).toContain(String(server.port));
      // The first one is unharmed.
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
    },
    T,
  );
});

describe('drm serve shutdown', () => {
  it(
    'on SIGTERM finishes a request in flight from a slow client, exits 0 and leaves the SQLite file consistent',
    async () => {
      const dir = tempDir();
      // log level info: the test waits for the "shutting down" line before sending the rest of the body.
      const server = await startServe({ dataDir: dir, logLevel: 'info' });
      const warm = await register(server.url, 'Before Shutdown');

      const res = await slowPost(
        `${server.url}/api/v1/auth/register`,
        JSON.stringify({ name: 'Slow Client', email: 'slow@example.test' }),
        async () => {
          server.child.kill('SIGTERM');
          await server.waitForStderr('"shutting down"');
          // The listening socket is closed: nobody new gets in while the old request drains.
          await expect(fetch(`${server.url}/health`)).rejects.toThrow();
        },
      );
      expect(res.status).toBe(201);
      // Draining: the connection is not kept for another request.
      expect(res.headers.connection).toBe('close');
      const slow = JSON.parse(res.body) as { organizationId: string; apiKey: string };
      expect(slow.apiKey).toMatch(/^drm_live_/);

      const exit = await server.exited;
      expect(exit).toEqual({ code: 0, signal: null });
      expect(server.stderr()).not.toMatch(/"level":"error"/);

      const file = path.join(dir, 'drm.db');
      // A clean close checkpoints the WAL into the file and removes it.
      const wal = `${file}-wal`;
      expect(!fs.existsSync(wal) || fs.statSync(wal).size === 0).toBe(true);
      const db = new Database(file, { readonly: true });
      try {
        expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
        expect(db.pragma('foreign_key_check')).toEqual([]);
        const names = db.prepare('select id, name from organizations order by name').all();
        expect(names).toEqual([
          { id: warm.organizationId, name: 'Before Shutdown' },
          { id: slow.organizationId, name: 'Slow Client' },
        ]);
      } finally {
        db.close();
      }
    },
    T,
  );

  it(
    'on SIGTERM with idle keep-alive connections open, exits 0 at once',
    async () => {
      const dir = tempDir();
      const server = await startServe({ dataDir: dir });
      // fetch keeps its connection open after these.
      await register(server.url, 'Keep Alive');
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
      const started = Date.now();
      expect(await server.stop('SIGTERM')).toEqual({ code: 0, signal: null });
      // Well under the 5 s keep-alive timeout it would wait out if idle connections were kept.
      expect(Date.now() - started).toBeLessThan(4_000);
    },
    T,
  );
});

describe('drm serve on Postgres', () => {
  it(
    'migrates a fresh database on start, serves registration and verify; a second serve on its port exits at once',
    async () => {
      const dir = tempDir();
      const db = await freshDatabaseUrl('postgres', dir);
      const server = await startServe({ dataDir: dir, db });
      try {
        expect(server.db).toBe('postgres');
        const reg = await register(server.url, 'Postgres Films');
        const verify = await fetch(`${server.url}/api/v1/auth/verify`, {
          headers: { authorization: `Bearer ${reg.apiKey}` },
        });
        expect(verify.status).toBe(200);
        expect(verify.headers.get('x-ratelimit-remaining')).toBe('999');

        const client = new pg.Client({ connectionString: db });
        await client.connect();
        try {
          const { rows } = await client.query('select count(*)::int as n from drm_migrations');
          expect(rows[0].n).toBeGreaterThan(0);
          const orgs = await client.query('select name from organizations');
          expect(orgs.rows).toEqual([{ name: 'Postgres Films' }]);
        } finally {
          await client.end();
        }

        // A second one on the taken port says so and exits; its open pool must not keep it alive
        // (pg's idle clients would hold the process for their 10 s idle timeout).
        const started = Date.now();
        const second = await runDrm([
          'serve',
          '--port',
          String(server.port),
          '--db',
          db,
          '--data-dir',
          dir,
          '--log-level',
          'warn',
        ]);
        expect(second.code).not.toBe(0);
        expect(second.stderr.trim()).toMatch(
          /^drm serve: starting on the deployment in [^\n]* \(database postgres\)\ndrm: cannot listen on .*already in use[^\n]*$/,
        );
        expect(Date.now() - started).toBeLessThan(9_000);
      } finally {
        expect(await server.stop()).toEqual({ code: 0, signal: null });
      }
    },
    T,
  );
});
