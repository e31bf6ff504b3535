import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContentRow } from '../../src/db/repos/index.js';
import type { Overview } from '../../src/domain/operations/overview.js';
import { TrafficMeter } from '../../src/domain/operations/traffic-meter.js';
import { segmentName } from '../../src/storage/content-store.js';
import { asAdmin, billedOrg, stream } from '../helpers/billing.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { schemaProblems } from '../helpers/openapi.js';

// drm top's honest figures, read from the database: a server idle yet running counts, a session
// is active while segments are sent to it (not once its download is done, nor once it ended), and
// the newest active sessions are listed with the viewer as its organization named it.

const SEGMENT_BYTES = 40_000;

describe.each(DIALECTS)('the overview of what plays, on %s', (dialect) => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof asAdmin>>;
  let org: Awaited<ReturnType<typeof billedOrg>>;
  let doc: Record<string, unknown>;

  const overview = async (): Promise<Overview> => {
    const res = await admin('GET', '/api/v1/admin/overview');
    expect(res.status).toBe(200);
    const body = (await res.json()) as Overview;
    expect(schemaProblems(doc, body, { $ref: '#/components/schemas/Overview' })).toEqual([]);
    return body;
  };
  /** Segments n of the session, fetched whole as a player does (the bytes are counted when the body ends). */
  const fetchSegments = async (content: ContentRow, sessionId: string, ns: number[]) => {
    for (const n of ns) {
      const res = await t.request('GET', `/api/v1/stream/${content.id}/segment/${n}.ts?session=${sessionId}`);
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBe(SEGMENT_BYTES);
    }
  };
  /** What the servers counted reaches the database, and the bucket it is in is over. */
  const settle = async () => {
    await t.traffic.flush();
    t.clock.advance(5000);
  };

  beforeAll(async () => {
    t = await makeTestApp(dialect);
    admin = await asAdmin(t);
    org = await billedOrg(t);
    const storagePath = org.content.storagePath as string;
    for (const variant of ['a', 'b'] as const)
      for (let n = 0; n < org.content.segmentCount; n++) {
        const file = path.join(t.ctx.storage.root, storagePath, segmentName(variant, n));
        fs.mkdirSync(path.dirname(file), { recursive: true });
        fs.writeFileSync(file, Buffer.alloc(SEGMENT_BYTES, n));
      }
    doc = (await (await t.request('GET', '/openapi.json')).json()) as Record<string, unknown>;
  });
  afterAll(() => t.close());

  it('counts a server that runs but serves nothing, and forgets one that stopped writing', async () => {
    await t.ctx.repos.traffic.prune(Number.MAX_SAFE_INTEGER);
    // No request at all: the flush writes this server's empty bucket all the same.
    await settle();
    expect((await overview()).traffic.servers).toBe(1);
    t.clock.advance(2 * 60_000);
    expect((await overview()).traffic.servers).toBe(0);
  });

  it("writes a busy server's rows in statements SQLite can bind; a statement that failed is written once, later", async () => {
    await t.ctx.repos.traffic.prune(Number.MAX_SAFE_INTEGER);
    const busy = new TrafficMeter(t.ctx, 'busy:1');
    const session = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    for (let i = 0; i < 2500; i++) busy.segmentBytes(10, session(i));
    const addSessions = t.ctx.repos.traffic.addSessions;
    let statements = 0;
    let written = 0;
    t.ctx.repos.traffic.addSessions = async (rows) => {
      if (++statements === 2) throw new Error('database away');
      expect(rows.length).toBeLessThanOrEqual(1000);
      await addSessions(rows);
      for (const row of rows) written += row.segmentBytes;
    };
    try {
      await expect(busy.flush()).rejects.toThrow('database away');
      await busy.flush();
    } finally {
      t.ctx.repos.traffic.addSessions = addSessions;
    }
    // 1,000 written, then 1,500 kept by the failure and written in two more
    expect(statements).toBe(4);
    expect(written).toBe(25_000);
    const totals = await t.ctx.repos.traffic.totalsBetween(0, Number.MAX_SAFE_INTEGER);
    expect(totals).toMatchObject({ segmentBytes: 25_000, servers: 1 });
  });

  it("lists a session while segments are sent to it, by the organization's own viewer name", async () => {
    await t.ctx.repos.traffic.prune(Number.MAX_SAFE_INTEGER);
    const alice = await stream(t, org.apiKey, org.content, 'alice');
    await stream(t, org.apiKey, org.content, 'bob');
    const carol = await stream(t, org.apiKey, org.content, 'carol');
    await fetchSegments(org.content, alice, [0, 1, 2]);
    // carol fetched every segment and ended her session; bob has fetched none yet
    await fetchSegments(org.content, carol, [0, 1, 2, 3, 4, 5]);
    expect((await t.request('DELETE', `/api/v1/stream/${carol}`, { key: org.apiKey })).status).toBe(200);
    await settle();

    const o = await overview();
    expect(o.sessions).toEqual({ active: 1, open: 2 });
    const viewer = await t.ctx.repos.viewers.findByExternal(org.organizationId, 'alice');
    expect(viewer?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(o.nowPlaying).toEqual([
      {
        sessionId: alice,
        organizationId: org.organizationId,
        organizationName: 'Acme Films',
        contentId: org.content.id,
        title: org.content.title,
        externalViewerId: 'alice',
        viewerId: viewer?.id,
        startedAt: expect.any(String),
        // three segments within the session's first bucket: measured over that bucket, not the minute
        bytesPerSecond: Math.round((3 * SEGMENT_BYTES) / 5),
      },
    ]);
    expect(o.traffic.segmentBytesPerSecond).toBe(Math.round((9 * SEGMENT_BYTES) / 60));
    expect(o.traffic.servers).toBe(1);
  });

  it('lets a finished download go: a session sent nothing for the window is no longer active', async () => {
    const dave = await stream(t, org.apiKey, org.content, 'dave');
    await fetchSegments(org.content, dave, [0, 1, 2, 3, 4, 5]);
    await settle();
    expect((await overview()).nowPlaying.map((p) => p.externalViewerId)).toEqual(['dave', 'alice']);
    t.clock.advance(61_000);
    await settle();
    const o = await overview();
    expect(o.sessions.active).toBe(0);
    expect(o.nowPlaying).toEqual([]);
    // neither ended nor expired: alice, bob and dave may still come back for more
    expect(o.sessions.open).toBe(3);
  });

  it('counts every active session and lists the ten newest, newest first', async () => {
    const started: string[] = [];
    for (let i = 0; i < 12; i++) {
      const id = await stream(t, org.apiKey, org.content, `viewer-${i}`);
      await fetchSegments(org.content, id, [i % org.content.segmentCount]);
      started.push(id);
      t.clock.advance(1);
    }
    await settle();
    const o = await overview();
    expect(o.sessions.active).toBe(12);
    expect(o.nowPlaying.map((p) => p.sessionId)).toEqual(started.slice(2).reverse());
    expect(o.nowPlaying[0]).toMatchObject({ externalViewerId: 'viewer-11', bytesPerSecond: SEGMENT_BYTES / 5 });
  });
});
