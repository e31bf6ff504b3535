// This checkout beside another commit in the same run (bench:billing, and bench:serve --baseline):
// two `drm serve` processes, each on its own fresh database with the same 30-s 720p clip, one from
// this checkout (`ours`) and one from a git worktree of the other commit (`baseline`, made by
// ../baseline.ts). Interleaved runs of (1) sessions/s of first-time viewers through POST /stream,
// (2) segment MB/s, each player fetching its own segments over keep-alive, and (3) GET
// /api/v1/auth/verify requests/s; medians of each side and the median of the per-run ratios.
import autocannon from 'autocannon';
import Table from 'cli-table3';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { mediaBinaries } from '../../src/media/binaries.js';
import { startCluster } from '../../test/helpers/postgres-cluster.js';
import { ROOT, type ServeProcess, startServe } from '../../test/helpers/serve-process.js';
import { baselineTree } from '../baseline.js';
import { cpuSeconds } from './proc-cpu.js';
import { median } from '../stats.js';

/** A deployment's database by name: undefined for SQLite (its data dir), a fresh database's URL on Postgres. */
export type Databases = (name: string) => Promise<string | undefined>;

export interface Sides {
  ours: number;
  baseline: number;
  /** The median of the per-run ratios ours / baseline. */
  ratio: number;
}

export interface SideBySide {
  sessions: Sides;
  segments: Sides;
  /** segment MB per CPU second of the server process (what the server spends, not the load generator) */
  segmentsPerCpu: Sides;
  verify: Sides;
}

export interface SideBySideOptions {
  /** Where the clip and each deployment's data dir go. */
  work: string;
  /** The baseline's checkout (a worktree from baselineTree). */
  baseline: string;
  runs: number;
  /** First-time viewers a run, per side. */
  sessions: number;
  players: number;
  /** Seconds of each segment and verify measure. */
  duration: number;
  log: (m: string) => void;
  /** This checkout's name in the log and its data dir (default `ours`). */
  label?: string;
}

/** The 30-s 720p clip both sides ingest, made once per work dir with the bundled ffmpeg. */
export const clip = (work: string): string => testClip(work, '1280x720', 30);

/** A test-pattern clip of that size and length (x264, fast to make), made once per work dir. */
export function testClip(work: string, size: string, seconds: number): string {
  const file = path.join(work, `clip-${size}-${seconds}s.mp4`);
  if (fs.existsSync(file)) return file;
  execFileSync(mediaBinaries().ffmpeg, [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=${size}:rate=25`,
    '-t',
    String(seconds),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    file,
  ]);
  return file;
}

export interface Deployment {
  name: string;
  server: ServeProcess;
  apiKey: string;
  contentId: string;
  dataDir: string;
}

/** A server of one checkout on a fresh database with the clip ingested, an organization licensed to it without limits. */
export async function deploy(name: string, tree: string, db: string | undefined, work: string): Promise<Deployment> {
  const bin = path.join(tree, 'bin/drm.js');
  const dataDir = path.join(work, `data-${name}-${db ? 'pg' : 'sqlite'}`);
  const dbArgs = db ? ['--db', db] : [];
  const drm = (...args: string[]) =>
    execFileSync(process.execPath, [bin, ...args, '--data-dir', dataDir, ...dbArgs], { cwd: tree, encoding: 'utf8' });
  drm('migrate');
  const { contentId } = JSON.parse(drm('ingest', clip(work), '--title', 'bench', '--type', 'video', '--json')) as {
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
/** Sessions of first-time viewers per second (every viewer id new: a viewer is made), 10 requests at a time. */
export async function sessionsPerSecond(d: Deployment, count: number): Promise<number> {
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

/**
 * Segment MB/s: each player its own session and sequence of segments, fetched one after another
 * (node:http, a keep-alive connection each) until `seconds` have passed, the segment in progress read to its
 * end; and MB per CPU second of the server process over the run. Every response is read whole and
 * counted: with a fixed duration that cuts responses off (autocannon's), a 10-s run charged the
 * server for up to 50 partly sent segments it never credited, and the figure moved by 2x from run
 * to run. On two cores the load generator, not the server, sets the MB/s, so the server's own
 * efficiency is the figure that tells two servers apart.
 */
export async function segmentMbPerSecond(
  d: Deployment,
  players: number,
  seconds: number,
): Promise<{ mbPerSecond: number; mbPerCpuSecond: number }> {
  const segments = fs
    .readdirSync(path.join(d.dataDir, 'content', d.contentId, 'plain'))
    .filter((f) => f.endsWith('.ts')).length;
  const urls: string[][] = [];
  for (let p = 0; p < players; p++) {
    const res = await fetch(`${d.server.url}/api/v1/stream/${d.contentId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ viewerId: `player-${p}` }),
    });
    const { sessionId } = (await res.json()) as { sessionId: string };
    urls.push(
      Array.from(
        { length: segments },
        (_, n) => `${d.server.url}/api/v1/stream/${d.contentId}/segment/${n}.ts?session=${sessionId}`,
      ),
    );
  }
  const pid = d.server.child.pid as number;
  const cpuBefore = cpuSeconds(pid);
  const started = performance.now();
  const until = started + seconds * 1000;
  let bytes = 0;
  const player = async (own: string[]) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    for (let n = 0; performance.now() < until; n++) {
      // Awaited first, then added: `bytes += await …` would read bytes before the wait and lose
      // what the other players added meanwhile.
      const got = await fetchWhole(own[n % own.length] as string, agent, d.name);
      bytes += got;
    }
    agent.destroy();
  };
  await Promise.all(urls.map(player));
  const elapsed = (performance.now() - started) / 1000;
  const cpu = cpuSeconds(pid) - cpuBefore;
  return { mbPerSecond: bytes / 1e6 / elapsed, mbPerCpuSecond: bytes / 1e6 / cpu };
}

/** One segment read to its end over the player's own keep-alive connection: its size in bytes. */
function fetchWhole(url: string, agent: http.Agent, side: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
        });
        res.on('end', () =>
          res.statusCode === 200 ? resolve(bytes) : reject(new Error(`${side}: a segment answered ${res.statusCode}`)),
        );
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

/** GET /api/v1/auth/verify requests/s (bench:api's endpoint) over 50 keep-alive connections. */
export async function verifyPerSecond(d: Deployment, seconds: number): Promise<number> {
  const r = await autocannon({
    url: `${d.server.url}/api/v1/auth/verify`,
    connections: 50,
    duration: seconds,
    headers: { authorization: `Bearer ${d.apiKey}` },
  });
  if (r.non2xx > 0) throw new Error(`${d.name}: ${r.non2xx} verify requests failed`);
  return r.requests.average;
}

type Pair = Omit<Sides, 'ratio'>;
const summary = (pairs: Pair[]): Sides => ({
  ours: median(pairs.map((p) => p.ours)),
  baseline: median(pairs.map((p) => p.baseline)),
  ratio: median(pairs.map((p) => p.ours / p.baseline)),
});

/** Both sides deployed on `target`, measured in interleaved runs, then stopped. */
export async function sideBySide(target: string, db: Databases, o: SideBySideOptions): Promise<SideBySide> {
  const label = o.label ?? 'ours';
  const ours = await deploy(label, ROOT, await db(label), o.work);
  const base = await deploy('baseline', o.baseline, await db('baseline'), o.work);
  const sessions: Pair[] = [];
  const segments: Pair[] = [];
  const segmentsPerCpu: Pair[] = [];
  const verify: Pair[] = [];
  await sessionsPerSecond(ours, 200);
  await sessionsPerSecond(base, 200);
  // The segment path warmed too: its first run compiles the stream code, which would be charged
  // to that run's bytes.
  await segmentMbPerSecond(ours, o.players, 2);
  await segmentMbPerSecond(base, o.players, 2);
  for (let r = 0; r < o.runs; r++) {
    // interleaved, the order swapped each run, so that drift under load favours neither
    const order = r % 2 ? [base, ours] : [ours, base];
    const measure = async <T>(f: (d: Deployment) => Promise<T>): Promise<{ ours: T; baseline: T }> => {
      const got = new Map<Deployment, T>();
      for (const d of order) got.set(d, await f(d));
      return { ours: got.get(ours) as T, baseline: got.get(base) as T };
    };
    const pair = await measure((d) => sessionsPerSecond(d, o.sessions));
    // Each side's segment run right after 2 s of the same load, unmeasured: what the sessions run
    // left to do (a WAL checkpoint, an old-generation collection) is then not charged to the bytes.
    const run = await measure(async (d) => {
      await segmentMbPerSecond(d, o.players, 2);
      return segmentMbPerSecond(d, o.players, o.duration);
    });
    const seg = { ours: run.ours.mbPerSecond, baseline: run.baseline.mbPerSecond };
    verify.push(await measure((d) => verifyPerSecond(d, o.duration)));
    sessions.push(pair);
    segments.push(seg);
    const both = (what: string, p: Pair) => `${what} ${label} ${p.ours.toFixed(0)} baseline ${p.baseline.toFixed(0)}`;
    const perCpu = { ours: run.ours.mbPerCpuSecond, baseline: run.baseline.mbPerCpuSecond };
    segmentsPerCpu.push(perCpu);
    o.log(
      `${target} run ${r + 1}: ${both('sessions/s', pair)}; ${both('segment MB/s', seg)}; ` +
        both('segment MB per server CPU s', perCpu),
    );
  }
  await Promise.all([ours.server.stop(), base.server.stop()]);
  return {
    sessions: summary(sessions),
    segments: summary(segments),
    segmentsPerCpu: summary(segmentsPerCpu),
    verify: summary(verify),
  };
}

/** A fresh database on the cluster for each name, so that each deployment has its own. */
export function databases(url: string): Databases {
  return async (name: string) => {
    const pg = await import('pg');
    const client = new pg.default.Client({ connectionString: url });
    await client.connect();
    await client.query(`create database bench_${name}`);
    await client.end();
    return url.replace(/\/postgres$/, `/bench_${name}`);
  };
}

/** `each` on SQLite and/or on a private Postgres cluster (started only when asked for), as `targets` lists. */
export async function onTargets<T>(targets: string[], each: (target: string, db: Databases) => Promise<T>) {
  const results: T[] = [];
  if (targets.includes('sqlite')) results.push(await each('SQLite', async () => undefined));
  if (targets.includes('postgres')) {
    const cluster = await startCluster();
    try {
      results.push(await each('Postgres', databases(cluster.url)));
    } finally {
      await cluster.stop();
    }
  }
  return results;
}

/** Takes away the baseline's worktree; never throws, so it can sit in a finally. */
export const removeTree = (dir: string) => spawnSync('git', ['-C', ROOT, 'worktree', 'remove', '--force', dir]);

export type TargetSides = SideBySide & { target: string };

/** This checkout beside `rev` on each target: the worktree made in `o.work` for the run and removed after it. */
export async function againstBaseline(
  rev: string,
  targets: string[],
  o: Omit<SideBySideOptions, 'baseline'>,
): Promise<TargetSides[]> {
  const dir = path.join(o.work, 'baseline');
  try {
    const baseline = baselineTree(ROOT, rev, dir).dir;
    return await onTargets(targets, async (target, db) => ({
      target,
      ...(await sideBySide(target, db, { ...o, baseline })),
    }));
  } finally {
    removeTree(dir);
  }
}

/**
 * One row per database and measure: both sides' medians and the median ratio against `target`
 * (a percentage). `verdict` adds PASS/FAIL for sessions and segments; verify stays informative
 * (its goal is bench:api's).
 */
export function sideBySideTable(
  rows: TargetSides[],
  l: { ours: string; baseline: string; target: number; verdict?: boolean },
): string {
  const t = new Table({
    head: [
      'database',
      'measure',
      l.ours,
      l.baseline,
      `${l.ours} / ${l.baseline} (target ≥ ${l.target}%)`,
      ...(l.verdict ? ['target met'] : []),
    ],
    style: { head: [], border: [] },
  });
  for (const r of rows) {
    for (const [name, m] of [
      ['sessions/s (first-time viewers)', r.sessions],
      ['segment MB/s', r.segments],
      ['segment MB per server CPU second', r.segmentsPerCpu],
      ['GET /auth/verify requests/s', r.verify],
    ] as const) {
      const met = name.startsWith('GET')
        ? 'informative (bench:api)'
        : name === 'segment MB/s'
          ? 'informative (the load generator sets it)'
          : 100 * m.ratio >= l.target
            ? 'PASS'
            : 'FAIL';
      const ratio = `${(100 * m.ratio).toFixed(l.verdict ? 1 : 0)}%`;
      t.push([r.target, name, m.ours.toFixed(0), m.baseline.toFixed(0), ratio, ...(l.verdict ? [met] : [])]);
    }
  }
  return `${t.toString()}\n`;
}
