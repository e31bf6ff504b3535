// Serving speed: `npm run bench:serve -- [--input FILE] [--players 50] [--duration 10] [--runs 3] [--targets sqlite,postgres] [--json]`.
//
// 1. Segments: a watermarked item is ingested (default the corpus's 30-s 720p clip) and `drm
//    serve` (SQLite) gives each of --players simulated players its own session; every player
//    fetches its own A/B sequence of segments, over and over, on its own keep-alive connection
//    (autocannon, one connection per player). Beside it, in the same run, nginx (Debian's
//    nginx-light) serves the same files from disk to the same players. MB/s and p99 latency,
//    median of --runs interleaved pairs; target: drm ≥ 60% of nginx's MB/s.
// 2. Sessions: POST /api/v1/stream/{id} with RS256 viewer tokens (signed beforehand, 2,000
//    viewers, so the first pass makes viewers and later ones find them), on SQLite and on a
//    private Postgres cluster: sessions per second and p99.
// Every server is a child process, so the load generator never shares their event loop.
import autocannon from 'autocannon';
import Table from 'cli-table3';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import { freePort, startCluster } from '../../test/helpers/postgres-cluster.js';
import { drm, killAll, type ServeProcess, startServe } from '../../test/helpers/serve-process.js';
import { median } from '../stats.js';
import { corpusFile } from '../corpus.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string', default: '/tmp/corpus/photo-720p-30s.mp4' },
    players: { type: 'string', default: '50' },
    duration: { type: 'string', default: '10' },
    runs: { type: 'string', default: '3' },
    targets: { type: 'string', default: 'sqlite,postgres' },
    json: { type: 'boolean', default: false },
  },
});
corpusFile(values.input);
const players = Number(values.players);
const duration = Number(values.duration);
const runs = Math.max(1, Number(values.runs));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-serve-'));
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const NGINX = '/usr/sbin/nginx';
const LIMITS = ['--per-hour', '10000000', '--monthly-streams', '100000000'];

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
  return { mbPerSecond: r.throughput.average / 1e6, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts };
}

async function startNginx(root: string): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const prefix = fs.mkdtempSync(path.join(work, 'nginx-'));
  fs.mkdirSync(path.join(prefix, 'logs'));
  const conf = path.join(prefix, 'nginx.conf');
  fs.writeFileSync(
    conf,
    // Workers as the bench's own user: the files sit in its private temporary directory.
    `${process.getuid?.() === 0 ? 'user root; ' : ''}daemon off; worker_processes auto; pid ${prefix}/nginx.pid; error_log ${prefix}/logs/error.log;
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 100000;
  types { video/mp2t ts; }
  server { listen 127.0.0.1:${port}; root ${root}; } }`,
  );
  const child = spawn(NGINX, ['-p', prefix, '-c', conf], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 100; i++) {
    if (await fetch(`${url}/`).then(() => true, () => false)) return { url, child };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('nginx did not start');
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

async function setUp(server: ServeProcess, dataDir: string, db: string[], contentId: string) {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const org = await json<{ organizationId: string; apiKey: string }>(
    await fetch(`${server.url}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench Org', email: 'ops@bench.test', signingPublicKey: await exportSPKI(publicKey), signingAlgorithm: 'RS256' }),
    }),
  );
  await drm(['admin', 'license', '--org', org.organizationId, '--content', contentId, '--type', 'video', '--watermark', '--data-dir', dataDir, ...db]);
  await drm(['admin', 'rate-limit', '--org', org.organizationId, ...LIMITS, '--data-dir', dataDir, ...db]);
  return { org, privateKey };
}

async function sessionsPerSecond(server: ServeProcess, dataDir: string, db: string[], contentId: string) {
  const { org, privateKey } = await setUp(server, dataDir, db, contentId);
  const exp = Math.floor(Date.now() / 1000) + 3600;
  const tokens = await Promise.all(Array.from({ length: 2000 }, (_, i) => new SignJWT({}).setProtectedHeader({ alg: 'RS256' }).setSubject(`viewer-${i}`).setExpirationTime(exp).sign(privateKey)));
  const figures: Array<{ rps: number; p99: number; non2xx: number }> = [];
  for (let r = 0; r < runs; r++) {
    let next = 0;
    const res = await autocannon({
      url: `${server.url}/api/v1/stream/${contentId}`,
      method: 'POST',
      connections: 10,
      duration: 5,
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
      requests: [{ setupRequest: (req) => ({ ...req, body: JSON.stringify({ viewerToken: tokens[next++ % tokens.length] }) }) }],
    });
    figures.push({ rps: res.requests.average, p99: res.latency.p99, non2xx: res.non2xx });
    log(`sessions run ${r + 1}: ${res.requests.average.toFixed(0)}/s, p99 ${res.latency.p99} ms, non-2xx ${res.non2xx}`);
  }
  return { rps: median(figures.map((f) => f.rps)), p99: median(figures.map((f) => f.p99)), non2xx: figures.reduce((n, f) => n + f.non2xx, 0) };
}

const results: Record<string, unknown> = {};
try {
  if (!fs.existsSync(NGINX)) throw new Error(`${NGINX} not found: apt-get install nginx-light`);
  const dataDir = path.join(work, 'data');
  log(`ingesting ${values.input} with --watermark`);
  await drm(['migrate', '--data-dir', dataDir]);
  const contentId = (JSON.parse(await drm(['ingest', values.input, '--title', 'bench', '--type', 'video', '--watermark', '--data-dir', dataDir, '--json'])) as { contentId: string }).contentId;
  const server = await startServe({ dataDir });
  const { org } = await setUp(server, dataDir, [], contentId);

  // Each player: its own session, its own A/B sequence, the same files nginx serves.
  const drmPaths: string[][] = [];
  const nginxPaths: string[][] = [];
  const segments = fs.readdirSync(path.join(dataDir, 'content', contentId, 'a')).filter((f) => f.endsWith('.ts')).length;
  for (let p = 0; p < players; p++) {
    const s = await json<{ sessionId: string; binaryId: string }>(
      await fetch(`${server.url}/api/v1/stream/${contentId}`, { method: 'POST', headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify({ viewerId: `player-${p}` }) }),
    );
    drmPaths.push(Array.from({ length: segments }, (_, n) => `/api/v1/stream/${contentId}/segment/${n}?session=${s.sessionId}`));
    nginxPaths.push(Array.from({ length: segments }, (_, n) => `/${s.binaryId[n % 40] === '1' ? 'b' : 'a'}/${String(n).padStart(5, '0')}.ts`));
  }
  const nginx = await startNginx(path.join(dataDir, 'content', contentId));
  const bytes = fs.statSync(path.join(dataDir, 'content', contentId, 'a', '00000.ts')).size;
  log(`${players} players, ${segments} segments of about ${(bytes / 1e6).toFixed(1)} MB; warming up`);
  await load(server.url, drmPaths, 2);
  await load(nginx.url, nginxPaths, 2);
  const pairs: Array<{ drm: Load; nginx: Load }> = [];
  for (let r = 0; r < runs; r++) {
    const n = await load(nginx.url, nginxPaths, duration);
    const d = await load(server.url, drmPaths, duration);
    pairs.push({ drm: d, nginx: n });
    log(`segments run ${r + 1}: drm ${d.mbPerSecond.toFixed(0)} MB/s p99 ${d.p99} ms (non-2xx ${d.non2xx}); nginx ${n.mbPerSecond.toFixed(0)} MB/s p99 ${n.p99} ms (non-2xx ${n.non2xx})`);
  }
  nginx.child.kill();
  results.segments = {
    players,
    drm: { mbPerSecond: median(pairs.map((p) => p.drm.mbPerSecond)), p99: median(pairs.map((p) => p.drm.p99)), non2xx: pairs.reduce((s, p) => s + p.drm.non2xx, 0) },
    nginx: { mbPerSecond: median(pairs.map((p) => p.nginx.mbPerSecond)), p99: median(pairs.map((p) => p.nginx.p99)), non2xx: pairs.reduce((s, p) => s + p.nginx.non2xx, 0) },
    ratio: median(pairs.map((p) => p.drm.mbPerSecond / p.nginx.mbPerSecond)),
    runs: pairs,
  };
  const targets = values.targets.split(',');
  if (targets.includes('sqlite')) results.sessionsSqlite = await sessionsPerSecond(server, dataDir, [], contentId);
  await server.stop();
  if (targets.includes('postgres')) {
    const cluster = await startCluster();
    try {
      const pgDir = path.join(work, 'pg-data');
      const db = ['--db', cluster.url];
      log('ingesting again into Postgres (plain: only the sessions are timed)');
      await drm(['migrate', '--data-dir', pgDir, ...db]);
      const pgContent = (JSON.parse(await drm(['ingest', values.input, '--title', 'bench', '--type', 'video', '--data-dir', pgDir, '--json', ...db])) as { contentId: string }).contentId;
      const pgServer = await startServe({ dataDir: pgDir, db: cluster.url });
      results.sessionsPostgres = await sessionsPerSecond(pgServer, pgDir, db, pgContent);
      await pgServer.stop();
    } finally {
      await cluster.stop();
    }
  }
} finally {
  killAll();
  spawnSync('pkill', ['-f', work]);
  fs.rmSync(work, { recursive: true, force: true });
}

if (values.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
else {
  type Side = { mbPerSecond: number; p99: number; non2xx: number };
  const s = results.segments as { drm: Side; nginx: Side; ratio: number };
  process.stdout.write(`${players} players fetching their own A/B segments (${path.basename(values.input)}, watermarked), ${runs} interleaved runs of ${duration} s, ${os.availableParallelism()} CPUs\n`);
  const t = new Table({ head: ['server', 'MB/s (median)', 'p99 ms', 'non-2xx', 'vs nginx (target ≥ 60%)'], style: { head: [], border: [] } });
  t.push(['drm serve (SQLite)', s.drm.mbPerSecond.toFixed(0), s.drm.p99, s.drm.non2xx, `${(s.ratio * 100).toFixed(0)}%`]);
  t.push(['nginx-light, same files', s.nginx.mbPerSecond.toFixed(0), s.nginx.p99, s.nginx.non2xx, '']);
  process.stdout.write(`${t.toString()}\n`);
  const u = new Table({ head: ['sessions (RS256 viewer tokens, 10 connections)', 'per second (median)', 'p99 ms', 'non-2xx'], style: { head: [], border: [] } });
  for (const [name, key] of [['SQLite', 'sessionsSqlite'], ['Postgres', 'sessionsPostgres']] as const) {
    const r = results[key] as { rps: number; p99: number; non2xx: number } | undefined;
    if (r) u.push([name, r.rps.toFixed(0), r.p99, r.non2xx]);
  }
  process.stdout.write(`${u.toString()}\n`);
}
