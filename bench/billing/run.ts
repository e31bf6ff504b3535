// Metering's cost: `npm run bench:billing -- [--baseline REV] [--runs 3] [--sessions 1500] [--players 20] [--duration 5] [--targets sqlite,postgres] [--reads 10000,100000,1000000] [--reads-only] [--json]`.
//
// Two `drm serve` processes in the same run, each on its own fresh database with the same clip:
// one from this checkout (metering on: every session records its price, the period closer runs,
// billing reads are served), one from the commit before billing (--baseline, default
// cb89ca1), checked out beside it as a git worktree that shares node_modules. Interleaved runs
// of (1) sessions/s: --sessions first-time viewers through POST /stream at 10 at a time,
// (2) segment MB/s: --players sessions each fetching its own segments over keep-alive for
// --duration s, and (3) GET /api/v1/auth/verify requests/s (bench:api's endpoint) for as long. Medians, and metered / baseline. Then, on this checkout alone, what the billing
// reads (the upcoming invoice, usage) and the close cost as a month's sessions grow, beside the
// month's scan they replaced, and what the usage counters add to writes (--reads-only: those
// alone, without the baseline). Prints numbers; it fails on nothing.
import autocannon from 'autocannon';
import Table from 'cli-table3';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { mediaBinaries } from '../../src/media/binaries.js';
import { startCluster } from '../../test/helpers/postgres-cluster.js';
import { killAll, ROOT, type ServeProcess, startServe } from '../../test/helpers/serve-process.js';
import { median } from '../stats.js';
import { billingReads } from './reads.js';
import { countersTables } from './tables.js';
import { writeCost } from './writes.js';
import { baselineTree } from '../baseline.js';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string', default: 'cb89ca1' },
    runs: { type: 'string', default: '3' },
    sessions: { type: 'string', default: '1500' },
    players: { type: 'string', default: '20' },
    duration: { type: 'string', default: '5' },
    targets: { type: 'string', default: 'sqlite,postgres' },
    reads: { type: 'string', default: '10000,100000,1000000' },
    'reads-only': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const runs = Math.max(1, Number(values.runs));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-billing-'));
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);

function clip(): string {
  const file = path.join(work, 'clip.mp4');
  if (fs.existsSync(file)) return file;
  execFileSync(mediaBinaries().ffmpeg, [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc2=size=1280x720:rate=25',
    '-t',
    '30',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    file,
  ]);
  return file;
}

interface Deployment {
  name: string;
  server: ServeProcess;
  apiKey: string;
  contentId: string;
  dataDir: string;
}

/** A server of one checkout on a fresh database with the clip ingested, an organization licensed to it without limits. */
async function deploy(name: string, tree: string, db: string | undefined): Promise<Deployment> {
  const bin = path.join(tree, 'bin/drm.js');
  const dataDir = path.join(work, `data-${name}-${db ? 'pg' : 'sqlite'}`);
  const dbArgs = db ? ['--db', db] : [];
  const drm = (...args: string[]) =>
    execFileSync(process.execPath, [bin, ...args, '--data-dir', dataDir, ...dbArgs], { cwd: tree, encoding: 'utf8' });
  drm('migrate');
  const { contentId } = JSON.parse(drm('ingest', clip(), '--title', 'bench', '--type', 'video', '--json')) as {
    contentId: string;
  };
  const server = await startServe({ dataDir, db, bin });
  const reg = (await (
    await fetch(`${server.url}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Bench' }),
    })
  ).json()) as { organizationId: string; apiKey: string };
  drm('admin', 'license', '--org', reg.organizationId, '--content', contentId, '--type', 'video');
  drm('admin', 'rate-limit', '--org', reg.organizationId, '--per-hour', '10000000', '--monthly-streams', '10000000');
  return { name, server, apiKey: reg.apiKey, contentId, dataDir };
}

let viewer = 0;
/** Sessions of first-time viewers per second, 10 requests at a time. */
async function sessionsPerSecond(d: Deployment, count: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next++ < count) {
      const res = await fetch(`${d.server.url}/api/v1/stream/${d.contentId}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ viewerId: `viewer-${viewer++}` }),
      });
      if (res.status !== 201) throw new Error(`${d.name}: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: 10 }, worker));
  return count / ((performance.now() - started) / 1000);
}

/** Segment MB/s: each player its own session and sequence of segments, one keep-alive connection each. */
async function segmentMbPerSecond(d: Deployment, players: number, seconds: number): Promise<number> {
  const segments = fs
    .readdirSync(path.join(d.dataDir, 'content', d.contentId, 'plain'))
    .filter((f) => f.endsWith('.ts')).length;
  const paths: string[][] = [];
  for (let p = 0; p < players; p++) {
    const res = await fetch(`${d.server.url}/api/v1/stream/${d.contentId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ viewerId: `player-${p}` }),
    });
    const { sessionId } = (await res.json()) as { sessionId: string };
    paths.push(
      Array.from({ length: segments }, (_, n) => `/api/v1/stream/${d.contentId}/segment/${n}.ts?session=${sessionId}`),
    );
  }
  let next = 0;
  const r = await autocannon({
    url: d.server.url,
    connections: players,
    duration: seconds,
    setupClient: (c) => c.setRequests((paths[next++ % players] as string[]).map((p) => ({ path: p }))),
  });
  if (r.non2xx > 0) throw new Error(`${d.name}: ${r.non2xx} segment requests failed`);
  return r.throughput.average / 1e6;
}

/** GET /api/v1/auth/verify requests/s (bench:api's endpoint) over 50 keep-alive connections. */
async function verifyPerSecond(d: Deployment, seconds: number): Promise<number> {
  const r = await autocannon({
    url: `${d.server.url}/api/v1/auth/verify`,
    connections: 50,
    duration: seconds,
    headers: { authorization: `Bearer ${d.apiKey}` },
  });
  if (r.non2xx > 0) throw new Error(`${d.name}: ${r.non2xx} verify requests failed`);
  return r.requests.average;
}

interface Pair {
  metered: number;
  baseline: number;
}
const ratio = (pairs: Pair[]) => median(pairs.map((p) => p.metered / p.baseline));

/** What the billing reads and the close cost as a month's sessions grow, on this checkout alone. */
async function reads(target: string, db: (name: string) => Promise<string | undefined>) {
  log(`${target}: what the upcoming invoice, usage and the close cost as a month's sessions grow`);
  return billingReads(
    await db('reads'),
    path.join(work, `reads-${target}`),
    (values.reads as string).split(',').map(Number),
    Math.max(7, runs),
  );
}

/** What the usage counters' triggers add to a session's insert and a segment's byte count. */
async function writes(target: string, db: (name: string) => Promise<string | undefined>) {
  log(`${target}: what the usage counters add to writes`);
  return writeCost(await db('writes'), path.join(work, `writes-${target}`));
}

async function compare(target: string, db: (name: string) => Promise<string | undefined>, baseline: string) {
  const none = { metered: Number.NaN, baseline: Number.NaN, ratio: Number.NaN };
  if (values['reads-only'])
    return {
      target,
      sessions: none,
      segments: none,
      verify: none,
      reads: await reads(target, db),
      writes: await writes(target, db),
    };
  const metered = await deploy('metered', ROOT, await db('metered'));
  const base = await deploy('baseline', baseline, await db('baseline'));
  const sessions: Pair[] = [];
  const segments: Pair[] = [];
  const verify: Pair[] = [];
  const perRun = Number(values.sessions);
  await sessionsPerSecond(metered, 200);
  await sessionsPerSecond(base, 200);
  for (let r = 0; r < runs; r++) {
    // interleaved, the order swapped each run, so that drift under load favours neither
    const order = r % 2 ? [base, metered] : [metered, base];
    const rate = new Map<Deployment, number>();
    for (const d of order) rate.set(d, await sessionsPerSecond(d, perRun));
    const mb = new Map<Deployment, number>();
    for (const d of order) mb.set(d, await segmentMbPerSecond(d, Number(values.players), Number(values.duration)));
    const api = new Map<Deployment, number>();
    for (const d of order) api.set(d, await verifyPerSecond(d, Number(values.duration)));
    verify.push({ metered: api.get(metered) as number, baseline: api.get(base) as number });
    const pair = { metered: rate.get(metered) as number, baseline: rate.get(base) as number };
    const seg = { metered: mb.get(metered) as number, baseline: mb.get(base) as number };
    sessions.push(pair);
    segments.push(seg);
    log(
      `${target} run ${r + 1}: sessions/s metered ${pair.metered.toFixed(0)} baseline ${pair.baseline.toFixed(0)}; segment MB/s metered ${seg.metered.toFixed(0)} baseline ${seg.baseline.toFixed(0)}`,
    );
  }
  await Promise.all([metered.server.stop(), base.server.stop()]);
  return {
    target,
    sessions: {
      metered: median(sessions.map((p) => p.metered)),
      baseline: median(sessions.map((p) => p.baseline)),
      ratio: ratio(sessions),
    },
    segments: {
      metered: median(segments.map((p) => p.metered)),
      baseline: median(segments.map((p) => p.baseline)),
      ratio: ratio(segments),
    },
    verify: {
      metered: median(verify.map((p) => p.metered)),
      baseline: median(verify.map((p) => p.baseline)),
      ratio: ratio(verify),
    },
    reads: await reads(target, db),
    writes: await writes(target, db),
  };
}

const results: Awaited<ReturnType<typeof compare>>[] = [];
try {
  const baseline = values['reads-only']
    ? ''
    : baselineTree(ROOT, values.baseline as string, path.join(work, 'baseline')).dir;
  const targets = (values.targets as string).split(',');
  if (targets.includes('sqlite')) results.push(await compare('SQLite', async () => undefined, baseline));
  if (targets.includes('postgres')) {
    const cluster = await startCluster();
    try {
      const databases = async (name: string) => {
        const pg = await import('pg');
        const client = new pg.default.Client({ connectionString: cluster.url });
        await client.connect();
        await client.query(`create database bench_${name}`);
        await client.end();
        return cluster.url.replace(/\/postgres$/, `/bench_${name}`);
      };
      results.push(await compare('Postgres', databases, baseline));
    } finally {
      await cluster.stop();
    }
  }
} finally {
  killAll();
  spawnSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', path.join(work, 'baseline')]);
  fs.rmSync(work, { recursive: true, force: true });
}

if (values.json) process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
else {
  if (!values['reads-only'])
    process.stdout.write(
      `metering on (this checkout) against ${values.baseline} (before billing), medians of ${runs} interleaved runs, ${os.availableParallelism()} CPUs\n`,
    );
  const t = new Table({
    head: ['database', 'measure', 'metered', 'baseline', 'metered / baseline (target ≥ 90%)'],
    style: { head: [], border: [] },
  });
  for (const r of results) {
    for (const [name, m] of [
      ['sessions/s (first-time viewers)', r.sessions],
      ['segment MB/s', r.segments],
      ['GET /auth/verify requests/s', r.verify],
    ] as const) {
      t.push([r.target, name, m.metered.toFixed(0), m.baseline.toFixed(0), `${(100 * m.ratio).toFixed(0)}%`]);
    }
  }
  if (!values['reads-only']) process.stdout.write(`${t.toString()}\n`);
  process.stdout.write(countersTables(results, Math.max(7, runs)));
}
