// Serving speed: `npm run bench:serve -- [--input FILE] [--players 50] [--duration 10] [--runs 3] [--targets sqlite,postgres] [--sessions 3000 (1500 with --baseline)] [--plays 8] [--sessions-only | --delivery-only | --baseline REV] [--json]`.
//
// 1. Segments: a watermarked item is ingested (default the corpus's 30-s 720p clip) and `drm
//    serve` (SQLite) gives each of --players simulated players its own session; every player
//    fetches its own A/B sequence of segments, over and over, on its own keep-alive connection
//    (autocannon, one connection per player). Beside it, in the same run, nginx (Debian's
//    nginx-light) serves the same files from disk to the same players. MB/s and p99 latency,
//    median of --runs interleaved pairs; target: drm ≥ 60% of nginx's MB/s.
// 2. Sessions (./sessions.ts): POST /api/v1/stream/{id} with RS256 viewer tokens signed beforehand,
//    on SQLite and on a private Postgres cluster: --sessions first-time viewers a run, then the
//    same viewers returning, beside bare insert transactions on the same kind of database.
//    --sessions-only skips parts 1 and 3 (no nginx, no corpus: a generated 12-s clip is ingested).
// 3. Delivery (./delivery.ts): the item in s3rver, --players players each playing --plays
//    whole sessions (POST, playlist, every segment) through `drm serve --segment-delivery proxy`
//    and `redirect`, beside nginx serving the same playlists and files from disk: sessions/s,
//    segments/s, MB/s and each process's own CPU per GB. --delivery-only skips parts 1 and 2.
// 4. --baseline REV, alone (no nginx, no corpus): this checkout beside REV (a git worktree) on --targets,
//    bench:billing's ./side-by-side.ts: --runs interleaved runs of first-time-viewer sessions/s (--sessions,
//    default 1500 here), segment MB/s (--players, --duration s) and GET /auth/verify requests/s. Target:
//    ≥ 95% of REV's sessions/s and segment MB/s (PASS/FAIL; verify informs, its goal is bench:api's).
// Every server is a child process, so the load generator never shares their event loop.
import autocannon from 'autocannon';
import Table from 'cli-table3';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startCluster } from '../../test/helpers/postgres-cluster.js';
import { drm, killAll, type ServeProcess, startServe } from '../../test/helpers/serve-process.js';
import {
  bareInsertsPerSecond,
  benchOrganization,
  CONNECTIONS_NOTE,
  type SessionFigures,
  sessionsPerSecond,
} from './sessions.js';
import { median } from '../stats.js';
import { corpusFile } from '../corpus.js';
import { type DeliveryResult, deliveryBesideNginx, deliveryTable } from './delivery.js';
import { findNginx, startNginx } from './nginx.js';
import { againstBaseline, type TargetSides, sideBySideTable, testClip } from './side-by-side.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string', default: '/tmp/corpus/photo-720p-30s.mp4' },
    players: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    targets: { type: 'string', default: 'sqlite,postgres' },
    sessions: { type: 'string' },
    plays: { type: 'string', default: '8' },
    'sessions-only': { type: 'boolean', default: false },
    'delivery-only': { type: 'boolean', default: false },
    baseline: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const sessionsOnly = values['sessions-only'];
const deliveryOnly = values['delivery-only'] && !sessionsOnly;
const rev = values.baseline;
if (!sessionsOnly && !rev) corpusFile(values.input);
const players = Number(values.players);
const duration = Number(values.duration);
const runs = Math.max(1, Number(values.runs));
const perRun = Number(values.sessions ?? (rev ? 1500 : 3000));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-serve-'));
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const NGINX = findNginx();

interface Load {
  mbPerSecond: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** One connection per player, each cycling through its own list of paths. */
async function load(base: string, paths: string[][], seconds: number): Promise<Load> {
  let next = 0;
  const r = await autocannon({
    url: base,
    connections: paths.length,
    duration: seconds,
    timeout: 30,
    setupClient: (client) => {
      client.setRequests((paths[next++ % paths.length] as string[]).map((p) => ({ path: p })));
    },
  });
  return {
    mbPerSecond: r.throughput.average / 1e6,
    p99: r.latency.p99,
    non2xx: r.non2xx,
    errors: r.errors + r.timeouts,
  };
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** A 12-s clip made with the bundled ffmpeg, for --sessions-only (only the sessions are timed). */
const generatedClip = () => testClip(work, '640x360', 12);

const sessionOptions = (server: ServeProcess, dataDir: string, db: string[], contentId: string) => ({
  server,
  dataDir,
  db,
  contentId,
  runs,
  perRun,
  log,
});

/** Part 1: each player its own session and A/B sequence, beside nginx serving the same files. */
async function segmentsBesideNginx(server: ServeProcess, dataDir: string, contentId: string, apiKey: string) {
  const drmPaths: string[][] = [];
  const nginxPaths: string[][] = [];
  const segments = fs
    .readdirSync(path.join(dataDir, 'content', contentId, 'a'))
    .filter((f) => f.endsWith('.ts')).length;
  for (let p = 0; p < players; p++) {
    const s = await json<{ sessionId: string; binaryId: string }>(
      await fetch(`${server.url}/api/v1/stream/${contentId}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ viewerId: `player-${p}` }),
      }),
    );
    drmPaths.push(
      Array.from({ length: segments }, (_, n) => `/api/v1/stream/${contentId}/segment/${n}?session=${s.sessionId}`),
    );
    nginxPaths.push(
      Array.from(
        { length: segments },
        (_, n) => `/${s.binaryId[n % 40] === '1' ? 'b' : 'a'}/${String(n).padStart(5, '0')}.ts`,
      ),
    );
  }
  const nginx = await startNginx(NGINX as string, path.join(dataDir, 'content', contentId), work);
  const bytes = fs.statSync(path.join(dataDir, 'content', contentId, 'a', '00000.ts')).size;
  log(`${players} players, ${segments} segments of about ${(bytes / 1e6).toFixed(1)} MB; warming up`);
  await load(server.url, drmPaths, 2);
  await load(nginx.url, nginxPaths, 2);
  const pairs: Array<{ drm: Load; nginx: Load }> = [];
  for (let r = 0; r < runs; r++) {
    const n = await load(nginx.url, nginxPaths, duration);
    const d = await load(server.url, drmPaths, duration);
    pairs.push({ drm: d, nginx: n });
    log(
      `segments run ${r + 1}: drm ${d.mbPerSecond.toFixed(0)} MB/s p99 ${d.p99} ms (non-2xx ${d.non2xx}); nginx ${n.mbPerSecond.toFixed(0)} MB/s p99 ${n.p99} ms (non-2xx ${n.non2xx})`,
    );
  }
  nginx.child.kill();
  return {
    players,
    drm: {
      mbPerSecond: median(pairs.map((p) => p.drm.mbPerSecond)),
      p99: median(pairs.map((p) => p.drm.p99)),
      non2xx: pairs.reduce((s, p) => s + p.drm.non2xx, 0),
    },
    nginx: {
      mbPerSecond: median(pairs.map((p) => p.nginx.mbPerSecond)),
      p99: median(pairs.map((p) => p.nginx.p99)),
      non2xx: pairs.reduce((s, p) => s + p.nginx.non2xx, 0),
    },
    ratio: median(pairs.map((p) => p.drm.mbPerSecond / p.nginx.mbPerSecond)),
    runs: pairs,
  };
}

const results: {
  segments?: Awaited<ReturnType<typeof segmentsBesideNginx>>;
  sessionsSqlite?: SessionFigures;
  sessionsPostgres?: SessionFigures;
  delivery?: DeliveryResult;
  sideBySide?: TargetSides[];
} = {};
const targets = values.targets.split(',');
try {
  if (rev)
    results.sideBySide = await againstBaseline(rev, targets, { work, runs, sessions: perRun, players, duration, log });
  else if (!sessionsOnly && !deliveryOnly && !NGINX)
    throw new Error('nginx not found: apt-get install nginx-light (or run --delivery-only, which skips its row)');
  if (!deliveryOnly && !rev) await segmentsAndSessions();
  if (!sessionsOnly && !rev)
    results.delivery = await deliveryBesideNginx({
      input: values.input,
      players,
      plays: Number(values.plays),
      runs,
      work,
      cpus: os.availableParallelism(),
      log,
    });
} finally {
  killAll();
  spawnSync('pkill', ['-f', work]);
  fs.rmSync(work, { recursive: true, force: true });
}

/** Parts 1 and 2, on the disk store. */
async function segmentsAndSessions() {
  const input = sessionsOnly ? generatedClip() : values.input;
  const dataDir = path.join(work, 'data');
  log(`ingesting ${input}${sessionsOnly ? '' : ' with --watermark'}`);
  await drm(['migrate', '--data-dir', dataDir]);
  const contentId = (
    JSON.parse(
      await drm([
        'ingest',
        input,
        '--title',
        'bench',
        '--type',
        'video',
        ...(sessionsOnly ? [] : ['--watermark']),
        '--data-dir',
        dataDir,
        '--json',
      ]),
    ) as { contentId: string }
  ).contentId;
  const server = await startServe({ dataDir });
  if (!sessionsOnly) {
    const { org } = await benchOrganization(server, dataDir, [], contentId);
    results.segments = await segmentsBesideNginx(server, dataDir, contentId, org.apiKey);
  }
  if (targets.includes('sqlite'))
    results.sessionsSqlite = await sessionsPerSecond(sessionOptions(server, dataDir, [], contentId), () =>
      bareInsertsPerSecond({ sqliteDir: dataDir }),
    );
  await server.stop();
  if (targets.includes('postgres')) {
    const cluster = await startCluster();
    try {
      const pgDir = path.join(work, 'pg-data');
      const db = ['--db', cluster.url];
      log('ingesting again into Postgres (plain: only the sessions are timed)');
      await drm(['migrate', '--data-dir', pgDir, ...db]);
      const pgContent = (
        JSON.parse(
          await drm(['ingest', input, '--title', 'bench', '--type', 'video', '--data-dir', pgDir, '--json', ...db]),
        ) as { contentId: string }
      ).contentId;
      const pgServer = await startServe({ dataDir: pgDir, db: cluster.url });
      results.sessionsPostgres = await sessionsPerSecond(sessionOptions(pgServer, pgDir, db, pgContent), () =>
        bareInsertsPerSecond({ postgresUrl: cluster.url }),
      );
      await pgServer.stop();
    } finally {
      await cluster.stop();
    }
  }
}

if (values.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
else {
  const s = results.segments;
  if (s) {
    process.stdout.write(
      `${players} players fetching their own A/B segments (${path.basename(values.input)}, watermarked), ${runs} interleaved runs of ${duration} s, ${os.availableParallelism()} CPUs\n`,
    );
    const t = new Table({
      head: ['server', 'MB/s (median)', 'p99 ms', 'non-2xx', 'vs nginx (target ≥ 60%)'],
      style: { head: [], border: [] },
    });
    t.push([
      'drm serve (SQLite)',
      s.drm.mbPerSecond.toFixed(0),
      s.drm.p99,
      s.drm.non2xx,
      `${(s.ratio * 100).toFixed(0)}%`,
    ]);
    t.push(['nginx-light, same files', s.nginx.mbPerSecond.toFixed(0), s.nginx.p99, s.nginx.non2xx, '']);
    process.stdout.write(`${t.toString()}\n`);
  }
  if (results.sessionsSqlite || results.sessionsPostgres) {
    process.stdout.write(
      `sessions: RS256 viewer tokens, ${CONNECTIONS_NOTE}, ${perRun} viewers a run, medians of ${runs} runs, ${os.availableParallelism()} CPUs\n`,
    );
    const u = new Table({
      head: [
        'database',
        'first-time /s',
        'p99 ms',
        'returning /s',
        'p99 ms',
        'non-2xx',
        'bare insert transactions /s',
        'first-time / bare',
        'returning / bare',
      ],
      style: { head: [], border: [] },
    });
    for (const [name, r] of [
      ['SQLite', results.sessionsSqlite],
      ['Postgres', results.sessionsPostgres],
    ] as const) {
      if (!r) continue;
      u.push([
        name,
        r.firstTime.perSecond.toFixed(0),
        r.firstTime.p99,
        r.returning.perSecond.toFixed(0),
        r.returning.p99,
        r.firstTime.non2xx + r.returning.non2xx,
        r.floor.toFixed(0),
        `${((100 * r.firstTime.perSecond) / r.floor).toFixed(1)}%`,
        `${((100 * r.returning.perSecond) / r.floor).toFixed(1)}%`,
      ]);
    }
    process.stdout.write(`${u.toString()}\n`);
  }
  if (results.delivery) process.stdout.write(deliveryTable(results.delivery, runs));
  if (results.sideBySide)
    process.stdout.write(
      `this checkout against ${rev}: ${perRun} first-time viewers, ${players} players, ${duration} s a measure; medians of ${runs} interleaved runs, ${os.availableParallelism()} CPUs\n${sideBySideTable(results.sideBySide, { ours: 'this checkout', baseline: rev as string, target: 95, verdict: true })}`,
    );
}
