import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { unseal } from '../../src/crypto/sealed.js';
import type { ContentRow } from '../../src/db/repos/index.js';
import { contentRule } from '../../src/domain/content-rule.js';
import { ingestContent } from '../../src/domain/ingest/ingest.js';
import { servedBit } from '../../src/watermark/segment-rule.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import {
  binaryIdToWord,
  codeWord,
  messageFromWindow,
  windowOf,
  wordToBinaryId,
} from '../../src/domain/identity/nested-code.js';
import { shellOf, viewerIdFor } from '../../src/domain/identity/viewer-ids.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { adminToken } from '../helpers/admin.js';
import { license, registerOrg } from '../helpers/fixtures.js';
import { expectError } from '../helpers/expect-error.js';

// Section 4.4 and 4.5 through app.request on both dialects, over content really ingested (a
// 12-s clip: two AES-128 segments, plain and watermarked).
const bins = mediaBinaries();
const backend = createCpuPoolBackend();
let mediaDir: string;
const film = () => path.join(mediaDir, 'film.mp4');

beforeAll(() => {
  mediaDir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-stream-'));
  const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
  ff(
    '-f',
    'lavfi',
    '-i',
    'mandelbrot=size=320x180:start_scale=1.2:end_scale=1.2',
    '-frames:v',
    '1',
    path.join(mediaDir, 'still.png'),
  );
  ff(
    '-loop',
    '1',
    '-framerate',
    '25',
    '-i',
    path.join(mediaDir, 'still.png'),
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:sample_rate=44100',
    '-vf',
    "crop=256:144:x='10+t*4':y='10+t*2'",
    '-t',
    '12',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    film(),
  );
});
afterAll(async () => {
  await backend.close();
  fs.rmSync(mediaDir, { recursive: true, force: true });
});

type Json = Record<string, unknown>;

describe.each(DIALECTS)('streaming and viewers on %s', (dialect) => {
  let t: TestApp;
  let plain: ContentRow;
  let marked: ContentRow;
  let rsa: Awaited<ReturnType<typeof generateKeyPair>>;
  let org: Awaited<ReturnType<typeof registerOrg>>;
  let rsaPem: string;

  beforeAll(async () => {
    t = await makeTestApp(dialect);
    const ingest = async (watermark: boolean) => {
      const r = await ingestContent(
        t.ctx,
        { input: film(), title: watermark ? 'Marked' : 'Plain', type: 'video', watermark },
        { backend: async () => backend },
      );
      return (await t.ctx.repos.content.find(r.contentId)) as ContentRow;
    };
    plain = await ingest(false);
    marked = await ingest(true);
    rsa = await generateKeyPair('RS256', { extractable: true });
    rsaPem = await exportSPKI(rsa.publicKey);
    org = await registerOrg(t, { signingPublicKey: rsaPem, signingAlgorithm: 'RS256' });
    await license(t, org.organizationId, plain.id);
    await license(t, org.organizationId, marked.id);
  }, 120_000);
  afterAll(() => t.close());

  const token = (claims: Json = {}, o: { sub?: string | null; exp?: number; key?: CryptoKey; alg?: string } = {}) => {
    const jwt = new SignJWT({ ...claims })
      .setProtectedHeader({ alg: o.alg ?? 'RS256' })
      .setIssuedAt(Math.floor(t.clock.now() / 1000));
    if (o.sub !== null) jwt.setSubject(o.sub ?? 'viewer-1');
    if (o.exp !== 0) jwt.setExpirationTime(o.exp ?? Math.floor(t.clock.now() / 1000) + 600);
    return jwt.sign(o.key ?? (rsa.privateKey as CryptoKey));
  };
  const start = (content: ContentRow, body: unknown = {}, key = org.apiKey, headers: Record<string, string> = {}) =>
    t.request('POST', `/api/v1/stream/${content.id}`, { key, body, headers });
  async function session(
    content: ContentRow,
    body: unknown = {},
  ): Promise<Json & { sessionId: string; binaryId: string; viewerId: string }> {
    const res = await start(content, body);
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Json & { sessionId: string; binaryId: string; viewerId: string };
  }
  const get = (url: string) => t.request('GET', url);
  const segmentUrl = (c: ContentRow, sessionId: string, n: number | string) =>
    `/api/v1/stream/${c.id}/segment/${n}?session=${sessionId}`;
  const keyUrl = (c: ContentRow, sessionId: string) => `/api/v1/stream/${c.id}/key?session=${sessionId}`;

  describe('POST /stream/{contentId}', () => {
    it('verifies an RS256 viewer token, makes the viewer on first sight and a session for it', async () => {
      const body = await session(plain, {
        viewerToken: await token({ email: 'v1@example.test' }, { sub: 'first-sight' }),
      });
      expect(body).toMatchObject({
        sessionId: expect.any(String),
        playlistUrl: `/api/v1/stream/${plain.id}/playlist?session=${body.sessionId}`,
        binaryId: expect.stringMatching(/^[01]{40}$/),
        walletAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
        isNewViewer: true,
        expiresAt: expect.any(String),
      });
      const again = await session(plain, { viewerToken: await token({}, { sub: 'first-sight' }) });
      expect(again).toMatchObject({
        isNewViewer: false,
        binaryId: body.binaryId,
        viewerId: body.viewerId,
        walletAddress: body.walletAddress,
      });
      expect(again.sessionId).not.toBe(body.sessionId);

      const events = await t.ctx.repos.webhookDeliveries.listForOrg(org.organizationId, 100);
      const created = events.filter((e) => e.eventType === 'viewer.created').map((e) => JSON.parse(e.body).data);
      expect(created).toContainEqual({
        viewerId: body.viewerId,
        walletAddress: body.walletAddress,
        binaryId: body.binaryId,
      });
      const streams = events.filter((e) => e.eventType === 'viewer.stream').map((e) => JSON.parse(e.body).data);
      expect(streams).toContainEqual({ viewerId: body.viewerId, contentId: plain.id, sessionId: again.sessionId });
    });

    it("keeps the viewer's own wallet from the token (hasOwnWallet)", async () => {
      const wallet = `0x${'ab'.repeat(20)}`;
      const body = await session(plain, { viewerToken: await token({ walletAddress: wallet }, { sub: 'own-wallet' }) });
      expect(body.walletAddress).toBe(wallet);
      const res = await t.request('GET', `/api/v1/viewers/${body.viewerId}`, { key: org.apiKey });
      expect(await res.json()).toMatchObject({ hasOwnWallet: true, walletAddress: wallet });
    });

    it('verifies ES256 tokens for an organization that signs with ES256', async () => {
      const ec = await generateKeyPair('ES256', { extractable: true });
      const es = await registerOrg(t, { signingPublicKey: await exportSPKI(ec.publicKey), signingAlgorithm: 'ES256' });
      await license(t, es.organizationId, plain.id);
      const res = await start(
        plain,
        { viewerToken: await token({}, { key: ec.privateKey as CryptoKey, alg: 'ES256' }) },
        es.apiKey,
      );
      expect(res.status).toBe(201);
      // An RS256 token is refused there: the algorithm must be the organization's.
      await expectError(await start(plain, { viewerToken: await token() }, es.apiKey), 400, 'BAD_REQUEST');
    });

    it("names the viewer by Shape B viewerId on the organization's word, or makes a random one", async () => {
      const a = await session(plain, { viewerId: 'crm-42' });
      const b = await session(plain, { viewerId: 'crm-42' });
      expect(b).toMatchObject({ viewerId: a.viewerId, isNewViewer: false });
      const anon1 = await session(plain);
      const anon2 = await session(plain);
      expect(anon1.viewerId).not.toBe(anon2.viewerId);
      expect(anon1.isNewViewer).toBe(true);
    });

    it('gives new viewers ids from the counter: distinct words of the code of the first 255, each named by any 28 consecutive segments', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push((await session(plain, { viewerId: `spread-${i}` })).binaryId);
      expect(new Set(ids).size).toBe(20);
      const level = shellOf(254n).level;
      expect(level.dimension).toBe(28);
      expect(await t.ctx.repos.counters.distinct('viewer-ids')).toBeLessThan(255);
      const messages = ids.map((id, i) => {
        const word = binaryIdToWord(id) ^ t.ctx.keys.viewerIds.mask;
        return messageFromWindow(level, (7 * i) % 40, windowOf(word, (7 * i) % 40, 28));
      });
      // a message decoded from a window names the whole id: its code word is the id's
      expect(messages.map((m) => wordToBinaryId(codeWord(m) ^ t.ctx.keys.viewerIds.mask))).toEqual(ids);
      expect(messages.every((m) => m < 1n << 28n)).toBe(true);
    });

    it('skips an id an older viewer already holds (one allocated at random before ids came from the counter)', async () => {
      // A new deployment: its counter's first number is 0, and an older viewer already holds that number's id.
      const fresh = await makeTestApp(dialect);
      try {
        const content = { ...plain, id: randomUUID() };
        await fresh.ctx.repos.content.insert(content);
        const other = await registerOrg(fresh);
        await license(fresh, other.organizationId, content.id);
        const now = fresh.clock.now();
        await fresh.ctx.repos.viewers.insert({
          id: randomUUID(),
          organizationId: other.organizationId,
          externalViewerId: 'from-before',
          binaryId: viewerIdFor(fresh.ctx.keys.viewerIds, 0n),
          walletAddress: `0x${'3'.repeat(40)}`,
          walletIndex: null,
          hasOwnWallet: true,
          email: null,
          totalStreams: 0,
          isBlocked: false,
          blockedReason: null,
          firstSeen: now,
          lastSeen: now,
        });
        const res = await fresh.request('POST', `/api/v1/stream/${content.id}`, {
          key: other.apiKey,
          body: { viewerId: 'after-the-planted-one' },
        });
        expect(res.status).toBe(201);
        // The next free number's id: from the same block of the counter, or the transaction's own block.
        const got = (await res.json()).binaryId;
        const next = Array.from({ length: 64 }, (_, k) => viewerIdFor(fresh.ctx.keys.viewerIds, BigInt(k)));
        expect(got).not.toBe(next[0]);
        expect(next.indexOf(got)).toBeGreaterThan(0);
      } finally {
        await fresh.close();
      }
    });

    it.each([
      ['expired', async () => token({}, { exp: Math.floor(t.clock.now() / 1000) - 120 })],
      [
        'signed with another key',
        async () => token({}, { key: (await generateKeyPair('RS256')).privateKey as CryptoKey }),
      ],
      [
        'HS256 signed with the public key (alg confusion)',
        async () =>
          new SignJWT({})
            .setProtectedHeader({ alg: 'HS256' })
            .setSubject('x')
            .setExpirationTime('10m')
            .sign(new TextEncoder().encode(rsaPem)),
      ],
      [
        'unsigned (alg none)',
        async () =>
          `${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x","exp":9999999999}').toString('base64url')}.`,
      ],
      ['without sub', async () => token({}, { sub: null })],
      ['without exp', async () => token({}, { exp: 0 })],
      ['for another organization (aud)', async () => token({ aud: randomUUID() })],
      ['not a JWT', async () => 'not.a.jwt'],
    ])('refuses a viewer token %s with 400 and makes no session', async (_what, make) => {
      const before = (await t.ctx.repos.webhookDeliveries.listForOrg(org.organizationId, 500)).length;
      await expectError(await start(plain, { viewerToken: await make() }), 400, 'BAD_REQUEST');
      expect((await t.ctx.repos.webhookDeliveries.listForOrg(org.organizationId, 500)).length).toBe(before);
    });

    it('answers 401 without a key, 403 for a key without the stream scope', async () => {
      await expectError(await t.request('POST', `/api/v1/stream/${plain.id}`, { body: {} }), 401, 'INVALID_API_KEY');
      const catalogOnly = await registerOrg(t, { scopes: ['catalog'] });
      await expectError(await start(plain, {}, catalogOnly.apiKey), 403, 'INSUFFICIENT_SCOPE');
    });

    it('answers LICENSE_REQUIRED without a license, 404 for unknown content', async () => {
      const other = await registerOrg(t);
      await expectError(await start(plain, {}, other.apiKey), 403, 'LICENSE_REQUIRED');
      await expectError(
        await t.request('POST', `/api/v1/stream/${randomUUID()}`, { key: org.apiKey, body: {} }),
        404,
        'NOT_FOUND',
      );
      await expectError(
        await t.request('POST', '/api/v1/stream/not-a-uuid', { key: org.apiKey, body: {} }),
        404,
        'NOT_FOUND',
      );
    });

    it.each([
      ['not JSON', '{"viewerToken":'],
      ['an array', '[]'],
      ['a number for viewerToken', { viewerToken: 5 }],
      ['a bad walletAddress', { walletAddress: '0x123' }],
      ['an empty viewerId', { viewerId: '' }],
      ['a token longer than 8 KiB', { viewerToken: 'x'.repeat(9000) }],
    ])('answers 400 for a body with %s', async (_what, body) => {
      await expectError(await start(plain, body), 400, 'BAD_REQUEST');
    });

    it("stops at the organization's monthly stream limit", async () => {
      const limited = await registerOrg(t);
      await license(t, limited.organizationId, plain.id);
      await t.ctx.repos.organizations.update(limited.organizationId, { monthlyStreamLimit: 2 });
      expect((await start(plain, {}, limited.apiKey)).status).toBe(201);
      expect((await start(plain, {}, limited.apiKey)).status).toBe(201);
      await expectError(await start(plain, {}, limited.apiKey), 429, 'MONTHLY_STREAM_LIMIT_EXCEEDED');
    });

    it('stores the client IP from X-Forwarded-For only behind a trusted proxy, and the user agent', async () => {
      const s = await (
        await start(plain, {}, org.apiKey, { 'x-forwarded-for': '203.0.113.9', 'user-agent': 'TestPlayer/1.0' })
      ).json();
      const stored = await t.ctx.repos.sessions.find(s.sessionId);
      expect(stored).toMatchObject({ ipAddress: null, userAgent: 'TestPlayer/1.0' }); // no socket, proxy not trusted
      const proxied = await makeTestApp(dialect, { config: { trustProxy: true } });
      try {
        const o = await registerOrg(proxied);
        const c = await proxied.ctx.repos.content.find(plain.id);
        if (!c) await proxied.ctx.repos.content.insert({ ...plain, id: plain.id });
        await license(proxied, o.organizationId, plain.id);
        const res = await proxied.request('POST', `/api/v1/stream/${plain.id}`, {
          key: o.apiKey,
          body: {},
          headers: { 'x-forwarded-for': '203.0.113.9, 10.0.0.1' },
        });
        expect(res.status).toBe(201);
        expect(await proxied.ctx.repos.sessions.find(((await res.json()) as Json).sessionId as string)).toMatchObject({
          ipAddress: '203.0.113.9',
        });
      } finally {
        await proxied.close();
      }
    });
  });

  describe('playlist, key and segments', () => {
    it("serves the session's playlist: AES-128 key URI and segment URIs through the service, not cached", async () => {
      const s = await session(plain);
      const res = await get(`/api/v1/stream/${plain.id}/playlist?session=${s.sessionId}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/vnd.apple.mpegurl');
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      // Players on the organizations' own sites may read it (the session id is the authorisation).
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const text = await res.text();
      expect(text.startsWith('#EXTM3U\n')).toBe(true);
      expect(text).toContain('#EXT-X-TARGETDURATION:10\n');
      expect(text).toContain(`#EXT-X-KEY:METHOD=AES-128,URI="/api/v1/stream/${plain.id}/key?session=${s.sessionId}"`);
      expect(text.match(/^#EXTINF:/gm)).toHaveLength(2);
      // Segment URIs end in .ts: ffmpeg since its 2025 HLS fixes refuses any without a media extension.
      expect(text).toContain(`\n/api/v1/stream/${plain.id}/segment/0.ts?session=${s.sessionId}\n`);
      expect(text).toContain(`\n/api/v1/stream/${plain.id}/segment/1.ts?session=${s.sessionId}\n`);
      expect(text.trimEnd().endsWith('#EXT-X-ENDLIST')).toBe(true);
    });

    it('serves the content key (16 bytes) to a live session, not cached', async () => {
      const s = await session(plain);
      const res = await get(keyUrl(plain, s.sessionId));
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('private, no-store');
      const bytes = Buffer.from(await res.arrayBuffer());
      expect(bytes).toEqual(Buffer.from(unseal(t.ctx.keys.seal, plain.contentKey as string), 'base64'));
    });

    /** A session of `key`'s organization for a viewer whom marking would serve B on one of the first `count` segments. */
    async function sessionWithAOne(key: string, name: string, count: number) {
      const rule = contentRule(t.ctx, marked);
      for (let i = 0; ; i++) {
        const res = await start(marked, { viewerId: `${name}-${i}` }, key);
        expect(res.status).toBe(201);
        const s = (await res.json()) as Json & { sessionId: string; binaryId: string };
        if (Array.from({ length: count }, (_, n) => servedBit(rule, s.binaryId, n)).includes(1)) return s;
      }
    }

    it("serves segment s of watermarked content from variant A or B by the bit of the viewer's binaryId that the content's keyed rule puts there, as {n}.ts and as {n}", async () => {
      expect(marked.segmentRule).toBe('keyed');
      const rule = contentRule(t.ctx, marked);
      const s = await sessionWithAOne(org.apiKey, 'ab-viewer', 2);
      expect(s.watermarked).toBe(true);
      for (const n of [0, 1, '0.ts', '1.ts']) {
        const res = await get(segmentUrl(marked, s.sessionId, n));
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('video/mp2t');
        const index = Number.parseInt(String(n), 10);
        const variant = servedBit(rule, s.binaryId, index) === 1 ? 'b' : 'a';
        const other = variant === 'a' ? 'b' : 'a';
        const body = Buffer.from(await res.arrayBuffer());
        expect(
          body.equals(fs.readFileSync(t.ctx.storage.segmentFile(marked.storagePath as string, variant, index))),
        ).toBe(true);
        expect(
          body.equals(fs.readFileSync(t.ctx.storage.segmentFile(marked.storagePath as string, other, index))),
        ).toBe(false);
      }
    });

    it('serves variant A for every segment to an organization whose license turns watermarking off; a grant that does not say marks', async () => {
      const bearer = await adminToken(t);
      const grant = async (org: { organizationId: string }, flag: Json) => {
        const path = `/api/v1/admin/organizations/${org.organizationId}/license`;
        const res = await t.request('POST', path, {
          key: bearer,
          body: { contentId: marked.id, contentType: 'video', ...flag },
        });
        expect(res.status).toBe(200);
      };
      const unmarked = await registerOrg(t, { name: 'Unmarked Co', email: 'ops@unmarked.test' });
      await grant(unmarked, { watermarkingEnabled: false });
      const s = await sessionWithAOne(unmarked.apiKey, 'plain-viewer', marked.segmentCount);
      expect(s.watermarked).toBe(false);
      const variantFile = (v: 'a' | 'b', n: number) =>
        fs.readFileSync(t.ctx.storage.segmentFile(marked.storagePath as string, v, n));
      for (let n = 0; n < marked.segmentCount; n++) {
        const body = Buffer.from(await (await get(segmentUrl(marked, s.sessionId, `${n}.ts`))).arrayBuffer());
        expect(body.equals(variantFile('a', n)), `segment ${n}`).toBe(true);
      }
      const detail = await t.request('GET', `/api/v1/stream/sessions/${s.sessionId}`, { key: unmarked.apiKey });
      expect(await detail.json()).toMatchObject({ watermarked: false });

      // Granted without the flag: marked, B where the content's rule serves the viewer's bit as B.
      const byDefault = await registerOrg(t, { name: 'Default Co', email: 'ops@default.test' });
      await grant(byDefault, {});
      const m = await sessionWithAOne(byDefault.apiKey, 'default-viewer', marked.segmentCount);
      expect(m.watermarked).toBe(true);
      const rule = contentRule(t.ctx, marked);
      const one = Array.from({ length: marked.segmentCount }, (_, n) => servedBit(rule, m.binaryId, n)).indexOf(1);
      const body = Buffer.from(await (await get(segmentUrl(marked, m.sessionId, `${one}.ts`))).arrayBuffer());
      expect(body.equals(variantFile('b', one))).toBe(true);
    });

    it('counts bytesServed exactly under concurrent segment requests', async () => {
      const s = await session(plain);
      const sizes = [0, 1].map(
        (n) => fs.statSync(t.ctx.storage.segmentFile(plain.storagePath as string, 'plain', n)).size,
      );
      const fetches = Array.from({ length: 12 }, (_, i) =>
        get(segmentUrl(plain, s.sessionId, i % 2)).then((r) => r.arrayBuffer()),
      );
      await Promise.all(fetches);
      const expected = 6 * (sizes[0] as number) + 6 * (sizes[1] as number);
      await expect
        .poll(async () => (await t.ctx.repos.sessions.find(s.sessionId))?.bytesServed, { timeout: 5000 })
        .toBe(expected);
      const res = await t.request('GET', `/api/v1/stream/sessions/${s.sessionId}`, { key: org.apiKey });
      expect(await res.json()).toMatchObject({
        id: s.sessionId,
        bytesServed: expected,
        isActive: true,
        binaryId: s.binaryId,
      });
    });

    it("refuses a missing, unknown or other content's session, and segment numbers out of range", async () => {
      const s = await session(plain);
      await expectError(await get(`/api/v1/stream/${plain.id}/playlist`), 400, 'BAD_REQUEST');
      await expectError(await get(`/api/v1/stream/${plain.id}/playlist?session=${randomUUID()}`), 404, 'NOT_FOUND');
      await expectError(await get(`/api/v1/stream/${plain.id}/playlist?session=nonsense`), 404, 'NOT_FOUND');
      await expectError(await get(keyUrl(marked, s.sessionId)), 404, 'NOT_FOUND');
      await expectError(await get(segmentUrl(plain, s.sessionId, 2)), 404, 'NOT_FOUND');
      await expectError(await get(segmentUrl(plain, s.sessionId, 'abc')), 400, 'BAD_REQUEST');
      await expectError(await get(segmentUrl(plain, s.sessionId, '0.mp4')), 400, 'BAD_REQUEST');
      await expectError(await get(segmentUrl(plain, s.sessionId, '0.ts.ts')), 400, 'BAD_REQUEST');
      await expectError(await get(segmentUrl(plain, s.sessionId, '2.ts')), 404, 'NOT_FOUND');
      await expectError(await get(segmentUrl(plain, s.sessionId, '-1')), 400, 'BAD_REQUEST');
    });

    it('gives an expired session no playlist, key or segment', async () => {
      const s = await session(plain);
      const before = t.clock.now();
      t.clock.set(Date.parse(s.expiresAt as string) + 1);
      try {
        for (const url of [
          `/api/v1/stream/${plain.id}/playlist?session=${s.sessionId}`,
          keyUrl(plain, s.sessionId),
          segmentUrl(plain, s.sessionId, 0),
        ]) {
          await expectError(await get(url), 403, 'SESSION_EXPIRED');
        }
        const res = await t.request('GET', `/api/v1/stream/sessions/${s.sessionId}`, { key: org.apiKey });
        expect(await res.json()).toMatchObject({ isActive: false });
      } finally {
        t.clock.set(before);
      }
    });

    it('ends a session by DELETE on either path; an ended session gets no key or segment', async () => {
      const a = await session(plain);
      const b = await session(plain);
      const delA = await t.request('DELETE', `/api/v1/stream/sessions/${a.sessionId}`, { key: org.apiKey });
      expect(await delA.json()).toEqual({ success: true });
      const delB = await t.request('DELETE', `/api/v1/stream/${b.sessionId}`, { key: org.apiKey });
      expect(await delB.json()).toEqual({ success: true });
      for (const s of [a, b]) {
        await expectError(await get(keyUrl(plain, s.sessionId)), 403, 'SESSION_EXPIRED');
        await expectError(await get(segmentUrl(plain, s.sessionId, 0)), 403, 'SESSION_EXPIRED');
      }
    });

    it("hides another organization's session from GET and DELETE", async () => {
      const s = await session(plain);
      const other = await registerOrg(t);
      await expectError(
        await t.request('GET', `/api/v1/stream/sessions/${s.sessionId}`, { key: other.apiKey }),
        404,
        'NOT_FOUND',
      );
      await expectError(
        await t.request('DELETE', `/api/v1/stream/sessions/${s.sessionId}`, { key: other.apiKey }),
        404,
        'NOT_FOUND',
      );
      await expectError(await t.request('GET', `/api/v1/stream/sessions/${s.sessionId}`), 401, 'INVALID_API_KEY');
      expect((await get(keyUrl(plain, s.sessionId))).status).toBe(200);
    });

    it("stops serving a suspended organization's sessions", async () => {
      const o = await registerOrg(t);
      await license(t, o.organizationId, plain.id);
      const s = (await (await start(plain, {}, o.apiKey)).json()) as Json & { sessionId: string };
      await t.ctx.repos.organizations.update(o.organizationId, { isActive: false });
      await expectError(await get(keyUrl(plain, s.sessionId)), 403, 'ORGANIZATION_SUSPENDED');
      await expectError(await start(plain, {}, o.apiKey), 403, 'ORGANIZATION_SUSPENDED');
    });
  });

  describe('catalog pictures', () => {
    it('serves the thumbnail and the preview ingest made, without a key; 404 for unknown content', async () => {
      const thumb = await get(`/api/v1/catalog/${plain.id}/thumbnail.jpg`);
      expect(thumb.status).toBe(200);
      expect(thumb.headers.get('content-type')).toBe('image/jpeg');
      expect(Buffer.from(await thumb.arrayBuffer()).subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
      const preview = await get(`/api/v1/catalog/${marked.id}/preview.mp4`);
      expect(preview.status).toBe(200);
      expect(preview.headers.get('content-type')).toBe('video/mp4');
      expect(
        Buffer.from(await preview.arrayBuffer())
          .subarray(4, 8)
          .toString(),
      ).toBe('ftyp');
      await expectError(await get(`/api/v1/catalog/${randomUUID()}/thumbnail.jpg`), 404, 'NOT_FOUND');
      await expectError(await get('/api/v1/catalog/nonsense/preview.mp4'), 404, 'NOT_FOUND');
    });
  });

  describe('viewers', () => {
    it('lastSeen is never earlier than firstSeen: not while time passes during the first stream, nor when a server clock lags', async () => {
      // Every reading of the clock a millisecond later than the one before, as on a real clock.
      const now = t.clock.now.bind(t.clock);
      t.clock.now = () => {
        t.clock.advance(1);
        return now();
      };
      try {
        const first = await session(plain, { viewerId: 'time-traveller' });
        const fresh = (await (
          await t.request('GET', `/api/v1/viewers/${first.viewerId}`, { key: org.apiKey })
        ).json()) as Json;
        expect(Date.parse(fresh.lastSeen as string)).toBeGreaterThanOrEqual(Date.parse(fresh.firstSeen as string));
      } finally {
        t.clock.now = now;
      }
      const s = await session(plain, { viewerId: 'time-traveller' });
      t.clock.advance(-3_600_000);
      await session(plain, { viewerId: 'time-traveller' });
      t.clock.advance(3_600_000);
      const later = (await (
        await t.request('GET', `/api/v1/viewers/${s.viewerId}`, { key: org.apiKey })
      ).json()) as Json;
      expect(Date.parse(later.lastSeen as string)).toBeGreaterThanOrEqual(Date.parse(later.firstSeen as string));
      expect(later.totalStreams).toBe(3);
    });

    it('blocks a viewer: viewer.blocked, no new session, no keys or segments for live ones; unblock restores', async () => {
      const s = await session(plain, { viewerId: 'to-block' });
      const block = await t.request('POST', `/api/v1/viewers/${s.viewerId}/block`, {
        key: org.apiKey,
        body: { reason: 'shared the stream' },
      });
      expect(await block.json()).toEqual({ success: true });
      const events = await t.ctx.repos.webhookDeliveries.listForOrg(org.organizationId, 500);
      expect(events.filter((e) => e.eventType === 'viewer.blocked').map((e) => JSON.parse(e.body).data)).toContainEqual(
        { viewerId: s.viewerId, reason: 'shared the stream' },
      );
      await expectError(await start(plain, { viewerId: 'to-block' }), 403, 'VIEWER_BLOCKED');
      await expectError(await get(keyUrl(plain, s.sessionId)), 403, 'VIEWER_BLOCKED');
      await expectError(await get(segmentUrl(plain, s.sessionId, 0)), 403, 'VIEWER_BLOCKED');

      const unblock = await t.request('POST', `/api/v1/viewers/${s.viewerId}/unblock`, { key: org.apiKey });
      expect(await unblock.json()).toEqual({ success: true });
      expect((await get(keyUrl(plain, s.sessionId))).status).toBe(200);
      expect((await start(plain, { viewerId: 'to-block' })).status).toBe(201);
    });

    it("lists the organization's viewers with total and page, filtered by blocked", async () => {
      const o = await registerOrg(t);
      await license(t, o.organizationId, plain.id);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push(((await (await start(plain, { viewerId: `l-${i}` }, o.apiKey)).json()) as Json).viewerId as string);
      await t.request('POST', `/api/v1/viewers/${ids[0]}/block`, { key: o.apiKey, body: {} });
      const page = async (q: string) =>
        (await (await t.request('GET', `/api/v1/viewers${q}`, { key: o.apiKey })).json()) as {
          viewers: Json[];
          total: number;
          page: number;
        };
      const first = await page('?limit=2&page=1');
      expect(first).toMatchObject({ total: 5, page: 1 });
      expect(first.viewers).toHaveLength(2);
      const third = await page('?limit=2&page=3');
      expect(third.viewers).toHaveLength(1);
      const all = [...first.viewers, ...(await page('?limit=2&page=2')).viewers, ...third.viewers].map((v) => v.id);
      expect(new Set(all)).toEqual(new Set(ids));
      expect(await page('?blocked=true')).toMatchObject({
        total: 1,
        viewers: [expect.objectContaining({ id: ids[0], isBlocked: true })],
      });
      expect((await page('?blocked=false')).total).toBe(4);
      await expectError(await t.request('GET', '/api/v1/viewers?blocked=maybe', { key: o.apiKey }), 400, 'BAD_REQUEST');
      await expectError(await t.request('GET', '/api/v1/viewers?limit=100000', { key: o.apiKey }), 400, 'BAD_REQUEST');
    });

    it("shows a viewer with its stream sessions; another organization's viewer is not found", async () => {
      const s = await session(plain, { viewerId: 'detail' });
      const res = await t.request('GET', `/api/v1/viewers/${s.viewerId}`, { key: org.apiKey });
      const v = (await res.json()) as Json & { streamSessions: Json[] };
      expect(v).toMatchObject({
        id: s.viewerId,
        externalViewerId: 'detail',
        binaryId: s.binaryId,
        isBlocked: false,
        totalStreams: 1,
      });
      expect(v.streamSessions).toEqual([
        expect.objectContaining({ id: s.sessionId, contentId: plain.id, bytesServed: 0 }),
      ]);
      const other = await registerOrg(t);
      await expectError(
        await t.request('GET', `/api/v1/viewers/${s.viewerId}`, { key: other.apiKey }),
        404,
        'NOT_FOUND',
      );
      await expectError(
        await t.request('POST', `/api/v1/viewers/${s.viewerId}/block`, { key: other.apiKey, body: {} }),
        404,
        'NOT_FOUND',
      );
      await expectError(
        await t.request('GET', `/api/v1/viewers/${randomUUID()}`, { key: org.apiKey }),
        404,
        'NOT_FOUND',
      );
      await expectError(
        await t.request('POST', `/api/v1/viewers/${s.viewerId}/block`, { key: org.apiKey, body: { reason: 7 } }),
        400,
        'BAD_REQUEST',
      );
      await expectError(await t.request('GET', '/api/v1/viewers'), 401, 'INVALID_API_KEY');
      const catalogOnly = await registerOrg(t, { scopes: ['catalog'] });
      await expectError(
        await t.request('GET', '/api/v1/viewers', { key: catalogOnly.apiKey }),
        403,
        'INSUFFICIENT_SCOPE',
      );
      await expectError(
        await t.request('GET', `/api/v1/stream/sessions/${s.sessionId}`, { key: catalogOnly.apiKey }),
        403,
        'INSUFFICIENT_SCOPE',
      );
      await expectError(
        await t.request('DELETE', `/api/v1/stream/${s.sessionId}`, { key: catalogOnly.apiKey }),
        403,
        'INSUFFICIENT_SCOPE',
      );
    });

    it('finds a viewer by binaryId with the forensics scope; 400 for anything but 40 characters of 0 and 1', async () => {
      const s = await session(plain, { viewerId: 'searched' });
      const res = await t.request('GET', `/api/v1/viewers/search?binaryId=${s.binaryId}`, { key: org.apiKey });
      expect(res.status).toBe(200);
      const { viewer } = (await res.json()) as { viewer: Json };
      expect(viewer).toEqual({
        id: s.viewerId,
        externalViewerId: 'searched',
        walletAddress: s.walletAddress,
        binaryId: s.binaryId,
        organizationName: 'Acme Films',
        email: null,
        totalStreams: 1,
        firstSeen: expect.any(String),
      });
      for (const bad of ['', '0101', `${s.binaryId}0`, s.binaryId.replace(/.$/, '2')]) {
        await expectError(
          await t.request('GET', `/api/v1/viewers/search?binaryId=${bad}`, { key: org.apiKey }),
          400,
          'BAD_REQUEST',
        );
      }
      const streamOnly = await registerOrg(t, { scopes: ['stream'] });
      await expectError(
        await t.request('GET', `/api/v1/viewers/search?binaryId=${s.binaryId}`, { key: streamOnly.apiKey }),
        403,
        'INSUFFICIENT_SCOPE',
      );
      // Another organization's forensics key does not see this organization's viewers.
      const other = await registerOrg(t);
      await expectError(
        await t.request('GET', `/api/v1/viewers/search?binaryId=${s.binaryId}`, { key: other.apiKey }),
        404,
        'NOT_FOUND',
      );
    });
  });
});
