import { execFileSync } from 'node:child_process';
import Sqlite from 'better-sqlite3';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePanFilm } from '../helpers/media.js';
import { loadServerSecret } from '../../src/crypto/secret.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { keyedRule, segmentRuleKey } from '../../src/watermark/segment-rule.js';
import { variantFor } from '../../src/watermark/segments.js';
import { registerOver } from '../helpers/fixtures.js';
import { REPORT_PDF, REPORT_SHOT, viewReport } from '../helpers/report-browser.js';
import { type CliResult, drm, killAll, runDrm, type ServeProcess, startServe } from '../helpers/serve-process.js';

// `drm analyze` for real: a film ingested with its marks by `drm ingest`, streamed by one viewer
// through `drm serve` with ffmpeg as the player, and that viewer's copy re-encoded at 720p CRF 28
// without its first 7 s. The CLI must trace it on the server (--server) and on the data
// directory (local), say nobody for an unmarked copy, and answer errors in one line with exit 1.
const T = 300_000;
const bins = mediaBinaries();
let dir: string;
let dataDir: string;
let server: ServeProcess;
let filmId: string;
let org: { organizationId: string; apiKey: string };
let alice: { sessionId: string; playlistUrl: string; binaryId: string };
const file = (name: string) => path.join(dir, name);
const sha256 = (f: string) => createHash('sha256').update(fs.readFileSync(f)).digest('hex');
/** The case of the local analysis below, whose evidence report is then read in Chromium. */
let localCase: string;
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
/** The leak's attack: 720p, CRF 28, the first 7 s cut (output seeking: input seeking on TS breaks the first GOP). */
const attack = (input: string, output: string) =>
  ff(
    '-i',
    input,
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
    output,
  );

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
type Json = Record<string, any>;

/** A failure: exit 1, nothing on stdout, exactly one line on stderr. */
/** The leaks the data directory's ended cases keep (--keep-leaks), as file names in uploads/. */
function keptLeaks(): string[] {
  const db = new Sqlite(path.join(dataDir, 'drm.db'), { readonly: true });
  const rows = db
    .prepare("select upload_path as ref from forensic_cases where status <> 'processing' and upload_path is not null")
    .all() as Array<{ ref: string }>;
  db.close();
  return rows.map((r) => path.basename(r.ref)).sort();
}

/** analyze's exit codes 2, 3 and 4 are findings: refused input exits 64 (EX_USAGE), other errors 1. */
function expectOneLineError(r: CliResult, pattern: RegExp, code: 1 | 64 = 1) {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stdout).toBe('');
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(pattern);
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-analyze-'));
  dataDir = file('data');
  makePanFilm(file('film.mp4'), 27);
  fs.writeFileSync(file('notes.txt'), 'not a film\n'.repeat(100));
  await drm(['migrate', '--data-dir', dataDir]);
  const ingested = JSON.parse(
    await drm([
      'ingest',
      file('film.mp4'),
      '--title',
      'Pan',
      '--type',
      'video',
      '--watermark',
      '--data-dir',
      dataDir,
      '--json',
    ]),
  ) as Json;
  filmId = ingested.contentId;
  // --json: every stage, the process's start first
  expect(ingested.stages.map((s: Json) => s.stage).slice(0, 2)).toEqual(['cli-start', 'probe']);
  server = await startServe({ dataDir });
  org = await registerOver(server.url, 'Analysts Inc');
  await drm([
    'admin',
    'license',
    '--org',
    org.organizationId,
    '--content',
    filmId,
    '--type',
    'video',
    '--watermark',
    '--data-dir',
    dataDir,
  ]);
  const res = await fetch(`${server.url}/api/v1/stream/${filmId}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${org.apiKey}`,
      'content-type': 'application/json',
      'user-agent': 'player of alice',
    },
    body: JSON.stringify({ viewerId: 'alice' }),
  });
  expect(res.status).toBe(201);
  alice = (await res.json()) as typeof alice;
  // What alice received, read by ffmpeg as a player reads it, then attacked.
  ff('-i', `${server.url}${alice.playlistUrl}`, '-c', 'copy', file('alice.ts'));
  attack(file('alice.ts'), file('alice-leak.mp4'));
  attack(file('film.mp4'), file('unmarked.mp4'));
}, T);
afterAll(() => {
  killAll();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('drm analyze --server', () => {
  afterAll(async () => {
    // The local runs below must not race the server's queue for their cases.
    await server.stop();
  });

  it(
    "traces alice's re-encoded, cut copy to her session (the key from DRM_API_KEY): --json is the analyze response, exit 0",
    async () => {
      const r = await runDrm(
        [
          'analyze',
          file('alice-leak.mp4'),
          '--content',
          filmId,
          '--server',
          server.url,
          '--json',
          '--report',
          file('server-case.html'),
        ],
        { DRM_API_KEY: org.apiKey },
        T,
      );
      expect(r.code, r.stderr).toBe(0);
      const body = JSON.parse(r.stdout) as Json;
      // The case's evidence report, fetched from the server once the case was decided.
      expect(r.stderr).toContain(`evidence report written to ${file('server-case.html')}`);
      const served = fs.readFileSync(file('server-case.html'), 'utf8');
      expect(served).toContain(body.caseId);
      expect(served).toContain(sha256(file('alice-leak.mp4')));
      expect(body).toMatchObject({
        caseId: expect.any(String),
        status: 'completed',
        contentId: filmId,
        contentType: 'video',
        classification: 'strong_match',
        matchedSession: {
          sessionId: alice.sessionId,
          externalViewerId: 'alice',
          ipAddress: '127.0.0.1',
          binaryId: alice.binaryId,
        },
        identificationProbability: 0,
        analysis: {
          candidates: 1,
          identificationProbability: 0,
          markProbability: expect.any(Number),
          candidateSet: [],
        },
      });
      expect(body.evidenceChain.session.id).toBe(alice.sessionId);
      expect(body.analysis.segments.map((s: Json) => s.index)).toEqual([0, 1, 2]);
      // The case is the organization's, as one opened over HTTP by hand would be.
      const cases = await fetch(`${server.url}/api/v1/forensics/cases`, {
        headers: { authorization: `Bearer ${org.apiKey}` },
      });
      expect(((await cases.json()) as Json).cases.map((c: Json) => c.id)).toContain(body.caseId);
      // What --server polls for an async case names alice as her organization did, beside the platform's id.
      const detail = (await (
        await fetch(`${server.url}/api/v1/forensics/cases/${body.caseId}`, {
          headers: { authorization: `Bearer ${org.apiKey}` },
        })
      ).json()) as Json;
      expect(detail.case).toMatchObject({
        matchedExternalViewerId: 'alice',
        matchedViewerId: body.matchedSession.viewerId,
      });
    },
    T,
  );

  it(
    'an error answer of the server is one line with its code, exit 1; so is --server without --api-key',
    async () => {
      const unknown = await runDrm([
        'analyze',
        file('alice-leak.mp4'),
        '--content',
        '00000000-0000-4000-8000-000000000000',
        '--server',
        server.url,
        '--api-key',
        org.apiKey,
      ]);
      expectOneLineError(unknown, /^drm: content 00000000-0000-4000-8000-000000000000 not found \(NOT_FOUND\)$/m);
      const badKey = await runDrm([
        'analyze',
        file('alice-leak.mp4'),
        '--content',
        filmId,
        '--server',
        server.url,
        '--api-key',
        'nope',
      ]);
      expectOneLineError(badKey, /^drm: .*\(INVALID_API_KEY\)$/m);
      const noKey = await runDrm(['analyze', file('alice-leak.mp4'), '--content', filmId, '--server', server.url]);
      expectOneLineError(noKey, /^drm: --server and --api-key go together/, 64);
    },
    T,
  );

  it(
    'refuses --db typed with --server, and takes DRM_DB set for the whole machine as the deployment, not a request',
    async () => {
      const leak = file('alice-leak.mp4');
      const typed = await runDrm([
        'analyze',
        leak,
        '--content',
        filmId,
        '--server',
        server.url,
        '--api-key',
        org.apiKey,
        '--db',
        'postgres://elsewhere/drm',
      ]);
      // analyze answers 2 for a weak match, so its refusals are 64.
      expect(typed.code).toBe(64);
      expect(typed.stderr).toBe('drm: --db applies to local analysis only, not with --server\n');
      // A cluster machine has DRM_DB in its environment: an unknown content answer shows the request went to the server.
      const fromEnv = await runDrm(
        [
          'analyze',
          leak,
          '--content',
          '00000000-0000-4000-8000-000000000000',
          '--server',
          server.url,
          '--api-key',
          org.apiKey,
        ],
        { DRM_DB: 'postgres://elsewhere/drm' },
      );
      expectOneLineError(fromEnv, /^drm: content 00000000-0000-4000-8000-000000000000 not found \(NOT_FOUND\)$/m);
    },
    T,
  );
});

describe('drm analyze on the data directory', () => {
  it(
    'prints the finding and the evidence chain as a table, exit 0',
    async () => {
      const r = await runDrm(
        ['analyze', file('alice-leak.mp4'), '--content', filmId, '--data-dir', dataDir, '--report', file('case.html')],
        { NODE_OPTIONS: '--trace-warnings' },
        T,
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/Warning/);
      expect(r.stdout).toMatch(/^case [0-9a-f-]{36}: strong_match$/m);
      expect(r.stdout).toContain(`evidence report written to ${file('case.html')}`);
      localCase = (/^case ([0-9a-f-]{36}):/m.exec(r.stdout) as RegExpExecArray)[1] as string;
      expect(r.stdout).toMatch(
        /mark\s+(\d\.\de-\d+|< 1e-300) \(chance that a copy without this content's mark reads as strongly\)/,
      );
      expect(r.stdout).toMatch(
        /identification\s+0 \(chance that an innocent viewer fits the decided bits, 1 candidate\)/,
      );
      expect(r.stdout).toMatch(new RegExp(`│ session\\s+│ ${alice.sessionId}, created \\d{4}-`));
      expect(r.stdout).toMatch(/│ viewer\s+│ alice \(platform id [0-9a-f-]{36}\)/);
      expect(r.stdout).toMatch(/│ organization\s+│ Analysts Inc \(/);
      expect(r.stdout).toMatch(/│ user agent\s+│ player of alice/);
      expect(r.stdout).toMatch(/│ wallet\s+│ 0x[0-9a-fA-F]{40} \(own wallet: no\)/);
      expect(r.stdout).toMatch(
        /^seg 0: z -?\d+\.\d \([AB?]\), seg 1: z -?\d+\.\d \([AB]\), seg 2: z -?\d+\.\d \([AB]\)$/m,
      );
      // The user's file is read, never taken: the case keeps a copy of its own (--keep-leaks), the same bytes.
      expect(fs.existsSync(file('alice-leak.mp4'))).toBe(true);
      const copies = fs.readdirSync(path.join(dataDir, 'uploads'));
      expect(copies).toEqual(keptLeaks());
      expect(copies.map((c) => sha256(path.join(dataDir, 'uploads', c)))).toContain(sha256(file('alice-leak.mp4')));
    },
    T,
  );

  it(
    'an unmarked copy of the film names nobody: exit 3, matchedSession null',
    async () => {
      const r = await runDrm(
        ['analyze', file('unmarked.mp4'), '--content', filmId, '--data-dir', dataDir, '--json'],
        {},
        T,
      );
      expect(r.code, r.stderr).toBe(3);
      const body = JSON.parse(r.stdout) as Json;
      expect(body).toMatchObject({
        status: 'completed',
        classification: 'no_match',
        matchedSession: null,
        evidenceChain: null,
        confidence: 0,
      });
      expect(body.analysis.segments.length).toBeGreaterThan(0);
      const human = await runDrm(['analyze', file('unmarked.mp4'), '--content', filmId, '--data-dir', dataDir], {}, T);
      expect(human.code, human.stderr).toBe(3);
      expect(human.stdout).toMatch(/^case [0-9a-f-]{36}: no_match$/m);
      expect(human.stdout).toMatch(/^no viewer named$/m);
    },
    T,
  );

  it(
    'unknown content (exit 1), a text file, a missing file and a missing flag (exit 64) are one line each',
    async () => {
      const unknown = await runDrm([
        'analyze',
        file('alice-leak.mp4'),
        '--content',
        '00000000-0000-4000-8000-000000000000',
        '--data-dir',
        dataDir,
      ]);
      expectOneLineError(
        unknown,
        /^drm: content 00000000-0000-4000-8000-000000000000 not found; drm content list shows the catalog$/m,
      );
      const text = await runDrm(['analyze', file('notes.txt'), '--content', filmId, '--data-dir', dataDir]);
      expectOneLineError(text, /^drm: the leak is not a video or audio file that ffmpeg can read$/m, 64);
      const missing = await runDrm(['analyze', file('nothing.mp4'), '--content', filmId, '--data-dir', dataDir]);
      expectOneLineError(missing, /^drm: leak .*nothing\.mp4 does not exist$/m, 64);
      const usage = await runDrm(['analyze', file('alice-leak.mp4'), '--data-dir', dataDir]);
      expectOneLineError(usage, /--content/, 64);
      // A refused leak leaves nothing behind in the uploads directory (only the leaks decided cases keep), and the user's file stays.
      expect(fs.readdirSync(path.join(dataDir, 'uploads')).sort()).toEqual(keptLeaks());
      expect(fs.existsSync(file('notes.txt'))).toBe(true);
    },
    T,
  );
});

describe('the evidence report of the local case', () => {
  it(
    'opens in Chromium with every part, loads nothing, and prints to a PDF of a few pages',
    async () => {
      const view = await viewReport(file('case.html'));
      console.log(`evidence report: screenshot ${REPORT_SHOT}, PDF ${REPORT_PDF} (${view.pdfPages} pages)`);
      expect(view.requests).toEqual([]);
      expect(view.title).toBe(`Forensic evidence report, case ${localCase}`);
      expect(view.headings).toEqual(
        expect.arrayContaining([
          'Evidence report',
          'Finding',
          'The case',
          'The leaked file',
          'Evidence chain',
          'What the leak reads',
          'What the leak can and cannot show',
          'Pictures side by side',
          'The method in plain words',
        ]),
      );
      expect(view.facts).toMatchObject({
        'SHA-256': sha256(file('alice-leak.mp4')),
        'Name as submitted': 'alice-leak.mp4',
        'Analysed by': expect.stringMatching(/^drm \d+\.\d+\.\d+/),
      });
      expect(view.facts.Size).toContain(`${fs.statSync(file('alice-leak.mp4')).size.toLocaleString('en-US')} bytes`);
      expect(view.facts.Duration).toMatch(/^2\d\.\d\d s/);
      expect(view.facts.Session).toContain(alice.sessionId);
      expect(view.facts['IP address']).toBe('127.0.0.1');
      expect(view.facts['User agent']).toBe('player of alice');
      // Segments 0, 1 and 2, each with the variant alice was served there by the film's keyed rule.
      expect(view.bars).toBe(3);
      const rule = keyedRule(segmentRuleKey(loadServerSecret(dataDir)), filmId);
      expect(view.plotBits).toBe([0, 1, 2].map((s) => variantFor(alice.binaryId, s, rule)).join(''));
      expect(view.chance).toMatch(/mark figure/);
      expect(view.chance).toMatch(/at most \d\.\d × 10−\d+/);
      expect(view.pictures.length).toBeGreaterThanOrEqual(4);
      expect(view.pictures.every((w) => w === 320)).toBe(true);
      expect(view.pdfPages).toBeGreaterThanOrEqual(2);
      expect(view.pdfPages).toBeLessThanOrEqual(6);
    },
    T,
  );

  it(
    'drm cases show --report renders the same case again from the database alone',
    async () => {
      const r = await runDrm(['cases', 'show', localCase, '--report', file('again.html'), '--data-dir', dataDir]);
      expect(r.code, r.stderr).toBe(0);
      const again = fs.readFileSync(file('again.html'), 'utf8');
      expect(again).toContain(sha256(file('alice-leak.mp4')));
      expect(again.match(/<img src="data:image\/jpeg;base64,/g)?.length).toBeGreaterThanOrEqual(4);
      // The pictures are kept beside the report, which every list of cases reads: it stays small.
      const db = new Sqlite(path.join(dataDir, 'drm.db'), { readonly: true });
      const stored = db
        .prepare('select length(report) as report, length(leak_frames) as frames from forensic_cases where id = ?')
        .get(localCase) as { report: number; frames: number };
      db.close();
      expect(stored.frames).toBeGreaterThan(20_000);
      expect(stored.report).toBeLessThan(20_000);
      // drm cases list names the matched viewer as the organization did; its JSON keeps the platform's id too.
      // (COLUMNS unset: the table is not folded to a terminal's width, one case a line)
      const table = await drm(['cases', 'list', '--data-dir', dataDir], { COLUMNS: '' });
      expect(table.split('\n').find((l) => l.includes(localCase))).toMatch(/│ alice\s+│ local \(drm analyze\)/);
      const listed = (JSON.parse(await drm(['cases', 'list', '--data-dir', dataDir, '--json'])) as Json).cases.find(
        (c: Json) => c.id === localCase,
      );
      expect(listed).toMatchObject({
        matchedExternalViewerId: 'alice',
        matchedViewerId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
    },
    T,
  );

  it(
    'drm cases verify passes the report as written and fails a copy changed by one character (exit 1)',
    async () => {
      const ok = await runDrm(['cases', 'verify', file('case.html'), '--data-dir', dataDir, '--json']);
      expect(ok.code, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout)).toMatchObject({
        intact: true,
        digestMatches: true,
        signatureValid: true,
        keyExpected: true,
        verified: true,
      });
      fs.writeFileSync(
        file('changed.html'),
        fs.readFileSync(file('case.html'), 'utf8').replace(
          alice.sessionId,
          alice.sessionId.replace(/.$/, (c) => (c === '0' ? '1' : '0')),
        ),
      );
      const changed = await runDrm(['cases', 'verify', file('changed.html'), '--data-dir', dataDir]);
      expect(changed.code).toBe(1);
      expect(changed.stdout).toMatch(/NOT INTACT/);
      expect(changed.stdout).toMatch(/does not match the file: it was changed/);
    },
    T,
  );
});
