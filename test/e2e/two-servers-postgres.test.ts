import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl } from '../helpers/context.js';
import { drm, killAll, type ServeProcess, startServe } from '../helpers/serve-process.js';

// Two `drm serve` processes on one Postgres database and one data directory (the server secret
// lives there), as behind a load balancer: the rate-limit counters and key revocation are shared.

const T = 180_000;
const HOUR_MS = 3_600_000;

describe('two drm serve processes on one Postgres database', () => {
  let dir: string;
  let db: string;
  let a: ServeProcess;
  let b: ServeProcess;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-e2e-two-'));
    db = await freshDatabaseUrl('postgres', dir);
    // Both at once on the empty database: migrations run under an advisory lock, so one
    // process migrates and the other finds the schema in place.
    [a, b] = await Promise.all([startServe({ dataDir: dir, db }), startServe({ dataDir: dir, db })]);
  }, T);

  afterAll(async () => {
    const exits = await Promise.all([a?.stop(), b?.stop()]);
    killAll();
    fs.rmSync(dir, { recursive: true, force: true });
    for (const exit of exits) if (exit) expect(exit).toEqual({ code: 0, signal: null });
  }, T);

  const register = async (server: ServeProcess, name: string) => {
    const res = await fetch(`${server.url}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name }),
    });
    expect(res.status).toBe(201);
    return (await res.json()) as { organizationId: string; apiKey: string };
  };

  const verify = async (server: ServeProcess, key: string) => {
    const res = await fetch(`${server.url}/api/v1/auth/verify`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { code?: string };
    return {
      server,
      status: res.status,
      code: body.code,
      limit: res.headers.get('x-ratelimit-limit'),
      remaining: res.headers.get('x-ratelimit-remaining'),
      reset: res.headers.get('x-ratelimit-reset'),
      retryAfter: res.headers.get('retry-after'),
    };
  };

  it('listen on two ports with one secret', () => {
    expect(a.port).not.toBe(b.port);
    expect(a.db).toBe('postgres');
    expect(b.db).toBe('postgres');
  });

  it(
    'share one hourly rate-limit counter: 20 of 30 alternating requests pass, 10 get 429',
    async () => {
      const org = await register(a, 'Shared Limits');
      await drm([
        'admin',
        'rate-limit',
        '--org',
        org.organizationId,
        '--per-hour',
        '20',
        '--db',
        db,
        '--data-dir',
        dir,
      ]);

      // The window is the clock hour: do not start a burst that the hour would split in two.
      const toNextHour = HOUR_MS - (Date.now() % HOUR_MS);
      if (toNextHour < 30_000) await new Promise((r) => setTimeout(r, toNextHour + 1_000));

      const results: Awaited<ReturnType<typeof verify>>[] = [];
      // 30 requests alternating A, B, A, …: one by one, then in concurrent groups of 4 and 8.
      const servers = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? a : b));
      let i = 0;
      for (const group of [1, 1, 1, 1, 1, 1, 4, 8, 4, 8]) {
        const batch = servers.slice(i, i + group);
        i += group;
        results.push(...(await Promise.all(batch.map((s) => verify(s, org.apiKey)))));
      }
      expect(i).toBe(30);

      const ok = results.filter((r) => r.status === 200);
      const limited = results.filter((r) => r.status === 429);
      expect(ok).toHaveLength(20);
      expect(limited).toHaveLength(10);
      for (const r of limited) {
        expect(r.code).toBe('RATE_LIMIT_EXCEEDED');
        expect(r.remaining).toBe('0');
        expect(Number(r.retryAfter)).toBeGreaterThan(0);
      }
      // Both servers answered, and each passed request saw its own count of the one shared counter.
      expect(new Set(ok.map((r) => r.server.port)).size).toBe(2);
      expect(new Set(limited.map((r) => r.server.port)).size).toBe(2);
      const remaining = ok.map((r) => Number(r.remaining));
      expect(new Set(remaining).size).toBe(20);
      expect([...remaining].sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, n) => n));
      for (const r of results) expect(r.limit).toBe('20');
      expect(new Set(results.map((r) => r.reset)).size).toBe(1);
    },
    T,
  );

  it(
    'a key rotated through A is refused by B at once, and its successor accepted',
    async () => {
      const org = await register(b, 'Rotating Keys');
      expect((await verify(b, org.apiKey)).status).toBe(200);

      const rotated = await fetch(`${a.url}/api/v1/auth/rotate`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}` },
      });
      expect(rotated.status).toBe(200);
      const { apiKey } = (await rotated.json()) as { apiKey: string };
      expect(apiKey).not.toBe(org.apiKey);

      const old = await verify(b, org.apiKey);
      expect(old.status).toBe(401);
      expect(old.code).toBe('INVALID_API_KEY');
      expect((await verify(a, org.apiKey)).status).toBe(401);
      expect((await verify(b, apiKey)).status).toBe(200);
      expect((await verify(a, apiKey)).status).toBe(200);
    },
    T,
  );
});
