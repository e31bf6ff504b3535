import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePanFilm } from '../helpers/media.js';
import { createApp } from '../../server/app.js';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { createContext } from '../../src/create-context.js';
import type { CaseRow, ContentRow } from '../../src/db/repos/index.js';
import { ForensicsQueue } from '../../src/domain/forensics/queue.js';
import { reportOf } from '../../src/domain/forensics/cases.js';
import { sweepExpiredLeaks } from '../../src/domain/forensics/leak-retention.js';
import { grantLicense } from '../../src/domain/licenses.js';
import { contentRule } from '../../src/domain/content-rule.js';
import { ingestContent } from '../../src/domain/ingest/ingest.js';
import { allAId } from '../../src/watermark/segment-rule.js';
import { variantFor } from '../../src/watermark/segments.js';
import { createLogger } from '../../src/log.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { adminToken } from '../helpers/admin.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { license, registerOrg, viewerCopy } from '../helpers/fixtures.js';
import { expectError } from '../helpers/expect-error.js';

// Section 4.8 through app.request on both dialects, over a film really ingested with its marks:
// three viewers stream it, one viewer's copy (assembled from the segments that viewer was
// served, re-encoded at 720p CRF 28 without its first 7 s) is uploaded, and the analysis must
// name that viewer and nobody for an unmarked copy.
const T = 240_000;
const bins = mediaBinaries();
const backend = createCpuPoolBackend();
let media: string;
const file = (name: string) => path.join(media, name);
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);

beforeAll(() => {
  media = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-forensics-'));
  makePanFilm(file('film.mp4'), 27);
  // The leak's attack: 720p, CRF 28, the first 7 s cut.
  ff(
    '-i',
    file('film.mp4'),
    '-ss',
    '7',
    '-vf',
    'scale=1280:720',
    '-c:v',
    'libx264',
    '-crf',
    '28',
    '-preset',
    'veryfast',
    '-an',
    file('unmarked.mp4'),
  );
  ff('-f', 'lavfi', '-i', 'sine=frequency=300:sample_rate=44100', '-t', '5', '-c:a', 'aac', file('audio-only.m4a'));
  fs.writeFileSync(file('notes.txt'), 'not a film\n'.repeat(200));
}, T);
afterAll(async () => {
  await backend.close();
  fs.rmSync(media, { recursive: true, force: true });
});

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

function form(fields: Record<string, string>, upload?: string): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.set(k, v);
  if (upload) f.set('file', new Blob([fs.readFileSync(upload)]), path.basename(upload));
  return f;
}

describe.each(DIALECTS)('forensics on %s', (dialect) => {
  let t: TestApp;
  let marked: ContentRow;
  let plain: ContentRow;
  let org: Awaited<ReturnType<typeof registerOrg>>;
  const viewers: Json[] = [];
  let leak: string;

  const analyze = (fields: Record<string, string>, upload?: string, key = org.apiKey, query = '') =>
    Promise.resolve(
      t.app.request(`/api/v1/forensics/analyze${query}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}` },
        body: form(fields, upload),
      }),
    );
  const uploads = () => fs.readdirSync(path.join(t.dir, 'uploads'));
  /** The uploads folder holds the leaks that ended cases keep (--keep-leaks), and nothing else: no refused upload stays. */
  const keptOnly = async () => {
    const { cases } = await t.ctx.repos.forensicCases.list(null, 100, 0);
    const kept = cases
      .filter((c) => c.status !== 'processing' && c.uploadPath)
      .map((c) => path.basename(c.uploadPath as string));
    expect(uploads().sort()).toEqual(kept.sort());
  };

  /** The copy a viewer received, re-encoded at 720p CRF 28 without its first 7 s. */
  function copyOf(viewer: Json, out: string) {
    fs.writeFileSync(`${out}.ts`, viewerCopy(t.ctx, marked, viewer.binaryId as string));
    ff(
      '-i',
      `${out}.ts`,
      '-ss',
      '7',
      '-vf',
      'scale=1280:720',
      '-c:v',
      'libx264',
      '-crf',
      '28',
      '-preset',
      'veryfast',
      '-an',
      out,
    );
  }

  beforeAll(async () => {
    t = await makeTestApp(dialect);
    const ingest = async (watermark: boolean) => {
      const r = await ingestContent(
        t.ctx,
        { input: file('film.mp4'), title: watermark ? 'Pan' : 'Pan (plain)', type: 'video', watermark },
        { backend: async () => backend },
      );
      return (await t.ctx.repos.content.find(r.contentId)) as ContentRow;
    };
    marked = await ingest(true);
    plain = await ingest(false);
    org = await registerOrg(t);
    await license(t, org.organizationId, marked.id);
    await license(t, org.organizationId, plain.id);
    // The leak (from 7 s on) holds segment 0 for 3 s and segments 1 and 2 whole. Its viewer is the
    // only one who streams the marked film until the last scenario, so a strong match may name them
    // from those bits (nobody else could stand in their place). Viewers are made on the plain film
    // until one is told apart from a session served unmarked (variant A throughout, streamed by a
    // later scenario) by those two segments; that one streams the marked film.
    let leaker: Json | undefined;
    for (const viewerId of ['alice', 'bob', 'carol', 'dave', 'erin', 'frank', 'grace', 'heidi']) {
      const res = await t.request('POST', `/api/v1/stream/${plain.id}`, { key: org.apiKey, body: { viewerId } });
      expect(res.status).toBe(201);
      const { binaryId } = (await res.json()) as Json;
      if ([1, 2].every((n) => variantFor(binaryId, n, contentRule(t.ctx, marked)) === 'A')) continue;
      const marked_ = await t.request('POST', `/api/v1/stream/${marked.id}`, {
        key: org.apiKey,
        body: { viewerId },
        headers: { 'user-agent': `player of ${viewerId}` },
      });
      expect(marked_.status).toBe(201);
      leaker = { ...((await marked_.json()) as Json), externalViewerId: viewerId };
      break;
    }
    expect(leaker, 'no viewer is told apart from the unmarked copy by segments 1 and 2').toBeDefined();
    viewers.push(leaker as Json);
    leak = file(`leak-${dialect}.mp4`);
    copyOf(leaker as Json, leak);
  }, T);
  afterAll(() => t.close());

  it(
    'traces a re-encoded, cut copy to its viewer, session, wallet, key and organization (strong_match)',
    async () => {
      const res = await analyze({ contentId: marked.id, contentType: 'video' }, leak);
      expect(res.status, await res.clone().text()).toBe(200);
      const body = (await res.json()) as Json;
      const [leaker] = viewers as [Json];
      expect(body).toMatchObject({
        status: 'completed',
        classification: 'strong_match',
        contentType: 'video',
        binaryId: leaker.binaryId,
      });
      expect(body.confidence).toBeGreaterThanOrEqual(2);
      expect(body.markProbability).toBeLessThan(1e-9);
      expect(body.identificationProbability).toBe(0);
      expect(body.analysis).toMatchObject({ candidates: 1, fitting: 1, candidateSet: [], mixedCopy: null });
      expect(body.matchedSession).toMatchObject({
        sessionId: leaker.sessionId,
        viewerId: leaker.viewerId,
        externalViewerId: leaker.externalViewerId,
        walletAddress: leaker.walletAddress,
        apiKey: org.apiKey.slice(0, 12),
        organization: 'Acme Films',
      });
      expect(body.evidenceChain).toMatchObject({
        apiKey: { prefix: org.apiKey.slice(0, 12), name: expect.any(String) },
        organization: { id: org.organizationId, name: 'Acme Films', email: 'ops@acme.test' },
        wallet: { address: leaker.walletAddress, hasOwnWallet: false },
        session: { id: leaker.sessionId, binaryId: leaker.binaryId, isActive: true },
        viewer: { viewerId: leaker.viewerId, userAgent: `player of ${leaker.externalViewerId}` },
        content: { contentId: marked.id, contentType: 'video', title: 'Pan' },
      });
      await keptOnly();
    },
    T,
  );

  it(
    'finds no viewer in an unmarked copy: no_match, no session, no evidence',
    async () => {
      const body = (await (
        await analyze({ contentId: marked.id, contentType: 'video' }, file('unmarked.mp4'))
      ).json()) as Json;
      expect(body).toMatchObject({
        status: 'completed',
        classification: 'no_match',
        matchedSession: null,
        evidenceChain: null,
      });
      expect(body.analysis.markProbability).toBeGreaterThan(1e-4);
    },
    T,
  );

  it(
    'keeps every case: listed most recent first with the total, each with its evidence',
    async () => {
      const list = (await (
        await t.request('GET', '/api/v1/forensics/cases?limit=10', { key: org.apiKey })
      ).json()) as Json;
      expect(list.total).toBeGreaterThanOrEqual(2);
      const dates = list.cases.map((c: Json) => c.createdAt);
      expect([...dates].sort().reverse()).toEqual(dates);
      const strong = list.cases.find((c: Json) => c.classification === 'strong_match');
      expect(strong).toMatchObject({
        matchedViewerId: viewers[0]?.viewerId,
        matchedOrganization: 'Acme Films',
        matchedWallet: viewers[0]?.walletAddress,
      });
      const detail = (await (
        await t.request('GET', `/api/v1/forensics/cases/${strong.id}`, { key: org.apiKey })
      ).json()) as Json;
      expect(detail.case).toMatchObject({ id: strong.id, status: 'completed', classification: 'strong_match' });
      expect(Object.keys(detail.evidenceChain.session).sort()).toEqual(['binaryId', 'bytesServed', 'createdAt', 'id']);
      expect(Object.keys(detail.evidenceChain.viewer).sort()).toEqual(['ipAddress', 'viewerId']);
    },
    T,
  );

  it(
    'queues a long analysis with ?async=true (202, processing) and completes it from the queue',
    async () => {
      const res = await analyze({ contentId: marked.id, contentType: 'video' }, leak, org.apiKey, '?async=true');
      expect(res.status).toBe(202);
      const queued = (await res.json()) as Json;
      expect(queued).toMatchObject({ status: 'processing', classification: null, matchedSession: null });
      const waitingRow = await t.ctx.repos.forensicCases.find(queued.caseId);
      expect(uploads()).toContain(path.basename(waitingRow?.uploadPath as string));
      const waiting = (await (
        await t.request('GET', `/api/v1/forensics/cases/${queued.caseId}`, { key: org.apiKey })
      ).json()) as Json;
      expect(waiting.case).toMatchObject({ status: 'processing', progress: null });
      // What the server or worker running it writes is what a polling client sees.
      await t.ctx.repos.forensicCases.setProgress(
        queued.caseId,
        JSON.stringify({ stage: 'score', done: 40, total: 250 }),
      );
      const running = (await (
        await t.request('GET', `/api/v1/forensics/cases/${queued.caseId}`, { key: org.apiKey })
      ).json()) as Json;
      expect(running.case.progress).toEqual({ stage: 'score', done: 40, total: 250 });
      await t.forensics.drain();
      const detail = (await (
        await t.request('GET', `/api/v1/forensics/cases/${queued.caseId}`, { key: org.apiKey })
      ).json()) as Json;
      expect(detail.case).toMatchObject({
        status: 'completed',
        classification: 'strong_match',
        matchedViewerId: viewers[0]?.viewerId,
      });
      expect(detail.case).not.toHaveProperty('progress');
      await keptOnly();
    },
    T,
  );

  it(
    'tells a run in this process what it is doing: the leak decoded, aligned, scored frame by frame, matched',
    async () => {
      const res = await analyze({ contentId: marked.id, contentType: 'video' }, leak, org.apiKey, '?async=true');
      const { caseId } = (await res.json()) as Json;
      const heard: Array<[string, number, number]> = [];
      const row = await t.forensics.run(caseId, undefined, (stage, done, total) => heard.push([stage, done, total]));
      expect(row).toMatchObject({ status: 'completed', classification: 'strong_match' });
      const stages = heard.map(([stage]) => stage).filter((s, i, all) => s !== all[i - 1]);
      expect(stages).toEqual(['decode', 'align', 'score', 'match']);
      const scored = heard.filter(([stage]) => stage === 'score');
      expect(scored.at(-1)?.[1]).toBe(scored.at(-1)?.[2]);
      expect(scored.length).toBeGreaterThan(5);
    },
    T,
  );

  it(
    'stores a run cancelled by its signal as failed, "analysis cancelled", and removes its upload',
    async () => {
      const res = await analyze({ contentId: marked.id, contentType: 'video' }, leak, org.apiKey, '?async=true');
      const { caseId } = (await res.json()) as Json;
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 300);
      const row = await t.forensics.run(caseId, controller.signal);
      expect(row).toMatchObject({ status: 'failed', failureReason: 'analysis cancelled', classification: null });
      await keptOnly();
    },
    T,
  );

  describe('tenancy', () => {
    it('refuses a leak of content the organization holds no license for: 403 LICENSE_REQUIRED, nothing stored', async () => {
      const stranger = await registerOrg(t, { name: 'Stranger', email: 'a@stranger.test' });
      await expectError(
        await analyze({ contentId: marked.id, contentType: 'video' }, leak, stranger.apiKey),
        403,
        'LICENSE_REQUIRED',
      );
      await expectError(
        await analyze({ contentId: marked.id, contentType: 'video' }, leak, stranger.apiKey, '?async=true'),
        403,
        'LICENSE_REQUIRED',
      );
      await keptOnly();
      const list = (await (await t.request('GET', '/api/v1/forensics/cases', { key: stranger.apiKey })).json()) as Json;
      expect(list).toMatchObject({ cases: [], total: 0 });
    });

    it(
      'names no viewer of another organization: the match is kept and flagged, every identity left out, in the answer and the stored case; the operator sees the whole chain',
      async () => {
        const rival = await registerOrg(t, { name: 'Rival Pictures', email: 'legal@rival.test' });
        await license(t, rival.organizationId, marked.id);
        const res = await analyze({ contentId: marked.id, contentType: 'video' }, leak, rival.apiKey);
        expect(res.status, await res.clone().text()).toBe(200);
        const body = (await res.json()) as Json;
        const [leaker] = viewers as [Json];
        expect(body).toMatchObject({
          status: 'completed',
          classification: 'strong_match',
          matchedOutsideOrganization: true,
          matchedSession: null,
          evidenceChain: null,
        });
        expect(body.binaryId).toMatch(/^[01?]{40}$/);
        expect(body.binaryId).not.toBe(leaker.binaryId);
        expect(body.analysis.markProbability).toBeLessThan(1e-9);

        const list = (await (await t.request('GET', '/api/v1/forensics/cases', { key: rival.apiKey })).json()) as Json;
        expect(list.cases[0]).toMatchObject({
          id: body.caseId,
          classification: 'strong_match',
          matchedOutsideOrganization: true,
          matchedViewerId: null,
          matchedViewer: null,
          matchedOrganization: null,
          matchedIpAddress: null,
          matchedWallet: null,
          matchedSessionDate: null,
        });
        const detail = (await (
          await t.request('GET', `/api/v1/forensics/cases/${body.caseId}`, { key: rival.apiKey })
        ).json()) as Json;
        expect(detail).toMatchObject({
          case: { matchedOutsideOrganization: true, matchedViewerId: null },
          evidenceChain: null,
        });
        const identities = [
          leaker.viewerId,
          leaker.sessionId,
          leaker.walletAddress,
          leaker.binaryId,
          leaker.externalViewerId,
          'Acme Films',
          'ops@acme.test',
          org.organizationId,
          org.apiKey.slice(0, 12),
        ];
        for (const seen of [body, list, detail]) {
          const text = JSON.stringify(seen);
          for (const identity of identities)
            expect(text, `${identity} shown to another organization`).not.toContain(identity);
        }

        const own = (await (
          await t.request('GET', '/api/v1/forensics/cases?limit=100', { key: org.apiKey })
        ).json()) as Json;
        expect(own.cases.find((c: Json) => c.classification === 'strong_match')).toMatchObject({
          matchedOutsideOrganization: false,
          matchedViewerId: leaker.viewerId,
        });

        const token = await adminToken(t);
        const asOperator = await t.request('GET', `/api/v1/admin/forensics/cases/${body.caseId}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(asOperator.status).toBe(200);
        expect(await asOperator.json()).toMatchObject({
          organizationId: rival.organizationId,
          case: {
            matchedOutsideOrganization: false,
            matchedViewerId: leaker.viewerId,
            matchedOrganization: 'Acme Films',
            binaryId: leaker.binaryId,
          },
          evidenceChain: {
            organization: { id: org.organizationId, name: 'Acme Films' },
            session: { id: leaker.sessionId },
          },
        });
        const all = (await (
          await t.request('GET', '/api/v1/admin/forensics/cases?limit=100', {
            headers: { authorization: `Bearer ${token}` },
          })
        ).json()) as Json;
        expect(all.cases.map((c: Json) => c.organizationId)).toEqual(
          expect.arrayContaining([org.organizationId, rival.organizationId]),
        );
      },
      T,
    );

    it(
      'names nobody in a copy of a session served unmarked (variant A throughout, by its license)',
      async () => {
        const unmarkedOrg = await registerOrg(t, { name: 'Unmarked Co', email: 'ops@unmarked.test' });
        await grantLicense(t.ctx, unmarkedOrg.organizationId, {
          contentId: marked.id,
          contentType: 'video',
          watermarkingEnabled: false,
        });
        const res = await t.request('POST', `/api/v1/stream/${marked.id}`, {
          key: unmarkedOrg.apiKey,
          body: { viewerId: 'unmarked-viewer' },
        });
        expect(((await res.json()) as Json).watermarked).toBe(false);
        const copy = file(`unmarked-copy-${dialect}.mp4`);
        // served A throughout: under the content's keyed rule, the id that rule serves as A everywhere
        const allA = allAId(contentRule(t.ctx, marked));
        copyOf({ binaryId: allA }, copy);
        const body = (await (await analyze({ contentId: marked.id, contentType: 'video' }, copy)).json()) as Json;
        expect(body).toMatchObject({
          status: 'completed',
          classification: 'no_match',
          matchedSession: null,
          evidenceChain: null,
        });
        expect(body.analysis.matchesUnmarkedSessions).toBe(true);
        expect([...body.binaryId].every((bit, p) => bit === '?' || bit === allA[p])).toBe(true);
      },
      T,
    );

    it('keeps the operator endpoints to signed-in admins, and unknown cases are 404', async () => {
      await expectError(
        await t.request('GET', '/api/v1/admin/forensics/cases/00000000-0000-4000-8000-000000000000'),
        401,
        'INVALID_ADMIN_TOKEN',
      );
      await expectError(
        await t.request('GET', '/api/v1/admin/forensics/cases', { key: org.apiKey }),
        401,
        'INVALID_ADMIN_TOKEN',
      );
      const token = await adminToken(t);
      const admin = { authorization: `Bearer ${token}` };
      await expectError(
        await t.request('GET', '/api/v1/admin/forensics/cases/00000000-0000-4000-8000-000000000000', {
          headers: admin,
        }),
        404,
        'NOT_FOUND',
      );
      await expectError(
        await t.request('GET', '/api/v1/admin/forensics/cases/not-a-case', { headers: admin }),
        404,
        'NOT_FOUND',
      );
      await expectError(
        await t.request('GET', '/api/v1/admin/forensics/cases?page=1e21', { headers: admin }),
        400,
        'BAD_REQUEST',
      );
    });
  });

  describe('bad input', () => {
    const ok = () => ({ contentId: marked.id, contentType: 'video' });

    it('refuses a request without a key (401) or without the forensics scope (403)', async () => {
      await expectError(
        await Promise.resolve(t.app.request('/api/v1/forensics/analyze', { method: 'POST', body: form(ok(), leak) })),
        401,
        'INVALID_API_KEY',
      );
      const streamer = await registerOrg(t, { name: 'Streamer', email: 'a@streamer.test', scopes: ['stream'] });
      await expectError(await analyze(ok(), leak, streamer.apiKey), 403, 'INSUFFICIENT_SCOPE');
      await expectError(
        await t.request('GET', '/api/v1/forensics/cases', { key: streamer.apiKey }),
        403,
        'INSUFFICIENT_SCOPE',
      );
      await keptOnly();
    });

    it('refuses a body that is not a form with a file, and missing or wrong fields (400)', async () => {
      await expectError(
        await t.request('POST', '/api/v1/forensics/analyze', { key: org.apiKey, body: ok() }),
        400,
        'BAD_REQUEST',
      );
      await expectError(await analyze(ok()), 400, 'BAD_REQUEST');
      await expectError(await analyze({ contentType: 'video' }, leak), 400, 'BAD_REQUEST');
      await expectError(await analyze({ contentId: marked.id, contentType: 'film' }, leak), 400, 'BAD_REQUEST');
      await expectError(await analyze({ contentId: marked.id, contentType: 'music' }, leak), 400, 'BAD_REQUEST');
      await expectError(await analyze(ok(), leak, org.apiKey, '?async=maybe'), 400, 'BAD_REQUEST');
      await keptOnly();
    });

    it('refuses unknown content (404) and content without a mark (400)', async () => {
      await expectError(
        await analyze({ contentId: '00000000-0000-4000-8000-000000000000', contentType: 'video' }, leak),
        404,
        'NOT_FOUND',
      );
      await expectError(await analyze({ contentId: plain.id, contentType: 'video' }, leak), 400, 'BAD_REQUEST');
      await keptOnly();
    });

    it('refuses a file that is not media, or holds no stream of the content type (400)', async () => {
      const notMedia = await analyze(ok(), file('notes.txt'));
      await expectError(notMedia, 400, 'BAD_REQUEST');
      await expectError(await analyze(ok(), file('audio-only.m4a')), 400, 'BAD_REQUEST');
      await keptOnly();
    });

    it('answers unknown and other organizations’ cases with 404, and bounds the list (400)', async () => {
      await expectError(
        await t.request('GET', '/api/v1/forensics/cases/00000000-0000-4000-8000-000000000000', { key: org.apiKey }),
        404,
        'NOT_FOUND',
      );
      const other = await registerOrg(t, { name: 'Other', email: 'a@other.test' });
      const mine = (await (await t.request('GET', '/api/v1/forensics/cases', { key: org.apiKey })).json()) as Json;
      await expectError(
        await t.request('GET', `/api/v1/forensics/cases/${mine.cases[0].id}`, { key: other.apiKey }),
        404,
        'NOT_FOUND',
      );
      expect(
        ((await (await t.request('GET', '/api/v1/forensics/cases', { key: other.apiKey })).json()) as Json).total,
      ).toBe(0);
      await expectError(
        await t.request('GET', '/api/v1/forensics/cases?limit=101', { key: org.apiKey }),
        400,
        'BAD_REQUEST',
      );
      await expectError(
        await t.request('GET', '/api/v1/forensics/cases?page=0', { key: org.apiKey }),
        400,
        'BAD_REQUEST',
      );
    });
  });

  it.runIf(dialect === 'sqlite')(
    'answers in Shape A with a fractional confidence and a flat evidence chain and case',
    async () => {
      const ctxA = await createContext(
        { ...t.ctx.config, apiShape: 'a' },
        { clock: t.clock, log: createLogger('silent') },
      );
      const queue = new ForensicsQueue(ctxA);
      const appA = createApp(ctxA, { forensics: queue });
      try {
        const res = await appA.request('/api/v1/forensics/analyze', {
          method: 'POST',
          headers: { authorization: `Bearer ${org.apiKey}` },
          body: form({ contentId: marked.id, contentType: 'video' }, leak),
        });
        const body = (await res.json()) as Json;
        // the whole answer in the message: this failed once under a full suite's load (status, failure reason)
        expect(body.confidence, JSON.stringify(body).slice(0, 2000)).toBeGreaterThan(0);
        expect(body.confidence).toBeLessThanOrEqual(1);
        expect(body.evidenceChain).toMatchObject({
          organization: 'Acme Films',
          viewer: viewers[0]?.viewerId,
          wallet: viewers[0]?.walletAddress,
          content: 'Pan',
          streamDate: expect.any(String),
        });
        const detail = (await (
          await appA.request(`/api/v1/forensics/cases/${body.caseId}`, {
            headers: { authorization: `Bearer ${org.apiKey}` },
          })
        ).json()) as Json;
        expect(detail).toMatchObject({
          id: body.caseId,
          classification: 'strong_match',
          evidenceChain: { organization: 'Acme Films' },
        });
        expect(detail.case).toBeUndefined();
      } finally {
        await queue.stop();
        await ctxA.db.close();
      }
    },
    T,
  );

  it(
    'names nobody from the same three segments once several viewers streamed the film: weak_match lists who fits',
    async () => {
      const [leaker] = viewers as [Json];
      for (const viewerId of ['victor', 'walter', 'xena', 'yolanda']) {
        expect(
          (await t.request('POST', `/api/v1/stream/${marked.id}`, { key: org.apiKey, body: { viewerId } })).status,
        ).toBe(201);
      }
      const body = (await (await analyze({ contentId: marked.id, contentType: 'video' }, leak)).json()) as Json;
      expect(body).toMatchObject({
        status: 'completed',
        classification: 'weak_match',
        matchedSession: null,
        evidenceChain: null,
      });
      expect(body.binaryId).toMatch(/^[01?]{40}$/);
      expect(body.markProbability).toBeLessThan(1e-9);
      expect(body.identificationProbability).toBeGreaterThan(1e-6);
      const set = body.analysis.candidateSet as Json[];
      expect(set.map((c) => c.viewerId)).toContain(leaker.viewerId);
      expect(set.length).toBe(body.analysis.fitting);
      for (const c of set)
        expect(c).toMatchObject({ agreement: body.analysis.decidedBits, posterior: expect.any(Number) });
      const list = (await (
        await t.request('GET', '/api/v1/forensics/cases?limit=100', { key: org.apiKey })
      ).json()) as Json;
      expect(list.cases.find((c: Json) => c.id === body.caseId)).toMatchObject({
        classification: 'weak_match',
        matchedViewerId: null,
        matchedWallet: null,
      });
    },
    T,
  );

  it(
    'keeps each analysed leak for --keep-leaks (90 days) after its case ended, then deletes it and says so in the report',
    async () => {
      const { cases } = await t.ctx.repos.forensicCases.list(null, 100, 0);
      const ended = cases.filter((c) => c.status !== 'processing' && c.uploadPath);
      expect(ended.length).toBeGreaterThan(3);
      const first = ended.find((c) => c.status === 'completed' && c.organizationId === org.organizationId) as CaseRow;
      const kept = fs.readFileSync(path.join(t.dir, 'uploads', path.basename(first.uploadPath as string)));
      expect(createHash('sha256').update(kept).digest('hex')).toBe(reportOf(first)?.leak?.sha256);
      const report = async () =>
        (await t.request('GET', `/api/v1/forensics/cases/${first.id}/report`, { key: org.apiKey })).text();
      expect(await report()).toMatch(/The deployment keeps the file in its store until \d{4}-\d\d-\d\d/);
      t.clock.advance(89 * 86_400_000);
      expect(await sweepExpiredLeaks(t.ctx)).toBe(0);
      t.clock.advance(2 * 86_400_000);
      expect(await sweepExpiredLeaks(t.ctx)).toBe(ended.length);
      expect(uploads()).toEqual([]);
      expect((await t.ctx.repos.forensicCases.find(first.id))?.uploadPath).toBeNull();
      expect(await report()).toContain('The deployment no longer keeps the file');
    },
    T,
  );
});

describe('forensics: the upload limit', () => {
  it('answers 413 for a leak over --max-upload and keeps nothing of it', async () => {
    const t = await makeTestApp('sqlite', { config: { maxUploadBytes: 4096 } });
    try {
      const org = await registerOrg(t);
      const body = new FormData();
      body.set('contentId', '00000000-0000-4000-8000-000000000000');
      body.set('contentType', 'video');
      body.set('file', new Blob([Buffer.alloc(64 * 1024, 1)]), 'big.mp4');
      const res = await t.app.request('/api/v1/forensics/analyze', {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}` },
        body,
      });
      await expectError(res, 413, 'PAYLOAD_TOO_LARGE');
      expect(fs.readdirSync(path.join(t.dir, 'uploads'))).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
