import Sqlite from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { billedOrg, stream } from '../helpers/billing.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';

// /ready says whether the server can work (database, migrations, data
// directory); /metrics gives Prometheus text with route patterns, never ids.

describe.each(DIALECTS)('readiness and metrics on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
  });
  afterAll(() => t.close());

  it('is ready with the database answering, every migration applied and the data directory writable', async () => {
    const res = await t.request('GET', '/ready');
    expect(res.status).toBe(200);
    const body = (await res.json()) as { ready: boolean; migrations: { applied: number; expected: number } };
    expect(body).toMatchObject({ ready: true, database: 'ok', dataDir: 'writable' });
    expect(body.migrations.applied).toBe(body.migrations.expected);
  });

  it('counts requests by route pattern and status, sessions, segment bytes, and the queues by status', async () => {
    const org = await billedOrg(t);
    const sessionId = await stream(t, org.apiKey, org.content);
    await t.request('GET', `/api/v1/stream/sessions/${sessionId}`, { key: org.apiKey });
    await t.request('GET', '/api/v1/nothing-here');
    const res = await t.request('GET', '/metrics');
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toContain('drm_http_requests_total{method="POST",route="/api/v1/stream/:contentId",status="201"} 1');
    expect(text).toContain(
      'drm_http_requests_total{method="GET",route="/api/v1/stream/sessions/:sessionId",status="200"} 1',
    );
    expect(text).toContain('drm_http_requests_total{method="GET",route="unmatched",status="404"} 1');
    expect(text).toMatch(
      /drm_http_request_duration_seconds_bucket\{le="0.001",method="POST",route="\/api\/v1\/stream\/:contentId"\} \d+/,
    );
    expect(text).toContain('drm_sessions_created_total 1');
    expect(text).toContain('drm_segment_bytes_total 0');
    expect(text).toContain('drm_webhook_deliveries{status="skipped"}');
    expect(text).toContain('# TYPE drm_forensic_cases gauge');
    expect(text).not.toContain(sessionId);
    expect(text).not.toContain(org.apiKey);
  });

  it.runIf(dialect === 'sqlite')('is not ready (503) while a migration this build knows is missing', async () => {
    const db = new Sqlite(t.ctx.config.db.slice('sqlite:'.length));
    const [{ v }] = db.prepare('select max(version) as v from drm_migrations').all() as [{ v: number }];
    const row = db.prepare('select * from drm_migrations where version = ?').get(v);
    db.prepare('delete from drm_migrations where version = ?').run(v);
    try {
      const res = await t.request('GET', '/ready');
      expect(res.status).toBe(503);
      expect(await res.json()).toMatchObject({ ready: false, migrations: { applied: v - 1, expected: v } });
    } finally {
      db.prepare('insert into drm_migrations (version, name, applied_at) values (@version, @name, @applied_at)').run(
        row,
      );
      db.close();
    }
  });
});
