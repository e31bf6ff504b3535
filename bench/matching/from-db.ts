// Matching at scale, from the database: `npm run bench:matching-db -- [--candidates 1000000] [--targets sqlite,postgres] [--runs 3] [--json]`.
//
// What `drm analyze` pays after detection when a content item had N viewers: reading the
// candidates (candidatesOf in src/domain/forensics/analyze.ts: every viewer with a marked session
// of the item, with its bits, a page at a time, packed) and matching the leak against them. One
// deployment per target (a SQLite file; a database in a private Postgres cluster), seeded with one
// organization, one item, N viewers and one session each (Postgres vacuumed until its tables are
// all-visible, as autovacuum leaves them), then --runs timed reads and matches after a warm-up
// (medians). Beside it in the same run, the way it was read before: one query joining sessions to
// viewers for every candidate at once, as row objects, then matched (matchCandidates packs them).
// Each way's heap is measured while it holds its candidates (node --expose-gc, so that garbage is
// not counted). Target: 10⁶ candidates in ≤ 5 s.
import BetterSqlite from 'better-sqlite3';
import Table from 'cli-table3';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { resolveConfig } from '../../src/config.js';
import type { Context } from '../../src/context.js';
import { createContext } from '../../src/create-context.js';
import { candidatesOf } from '../../src/domain/forensics/analyze.js';
import { codeWord, wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { matchCandidates, matchPackedCandidates } from '../../src/domain/forensics/matching/matching.js';
import type { Candidate } from '../../src/domain/forensics/matching/packed-ids.js';
import { createLogger } from '../../src/log.js';
import { type Cluster, startCluster } from '../../test/helpers/postgres-cluster.js';
import { median } from '../stats.js';
import { FIXED_RULE } from '../../src/watermark/segment-rule.js';

const { values } = parseArgs({
  options: {
    candidates: { type: 'string', default: '1000000' },
    targets: { type: 'string', default: 'sqlite,postgres' },
    runs: { type: 'string', default: '3' },
    segments: { type: 'string', default: '24' },
    json: { type: 'boolean', default: false },
  },
});
const n = Number(values.candidates);
const runs = Math.max(1, Number(values.runs));
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const CONTENT = 'content-1';
const ORG = 'org-1';
const binaryIdOf = (i: number) => wordToBinaryId(codeWord(BigInt(i + 1)));
/** Viewer ids are random UUIDs, as drm makes them: index order is not the order they were written in. */
const viewerIds = Array.from({ length: n }, () => randomUUID());
const viewerIdOf = (i: number) => viewerIds[i] as string;

async function openContext(dir: string, db: string): Promise<Context> {
  return createContext(resolveConfig({ dataDir: dir, db, logLevel: 'silent' }, {}), { log: createLogger('silent') });
}

const ORG_ROW = `insert into organizations (id, name, wallet_address, signing_algorithm, webhook_secret_sealed, plan, is_active, apusd_balance_micro, created_at, autopay_enabled)`;
const CONTENT_ROW = `insert into content (id, title, type, duration_ms, is_watermarked, segment_count, status, created_at)`;

function seedSqlite(file: string): void {
  const db = new BetterSqlite(file);
  db.pragma('journal_mode = WAL');
  db.exec(`${ORG_ROW} values ('${ORG}', 'bench', '0x0', 'RS256', 'x', 'paid', 1, 0, 0, 0)`);
  db.exec(`${CONTENT_ROW} values ('${CONTENT}', 'film', 'video', 600000, 1, 60, 'ready', 0)`);
  const viewer = db.prepare(
    'insert into viewers (id, organization_id, external_viewer_id, binary_id, wallet_address, has_own_wallet, total_streams, is_blocked, first_seen, last_seen) values (?, ?, ?, ?, ?, 0, 1, 0, 0, 0)',
  );
  const session = db.prepare(
    'insert into stream_sessions (id, organization_id, api_key_id, content_id, viewer_id, is_active, bytes_served, expires_at, created_at, watermarked, viewer_bits) values (?, ?, ?, ?, ?, 0, 0, 0, 0, 1, ?)',
  );
  db.transaction(() => {
    for (let i = 0; i < n; i++) {
      viewer.run(viewerIdOf(i), ORG, `ext-${i}`, binaryIdOf(i), '0x0');
      session.run(randomUUID(), ORG, 'key-1', CONTENT, viewerIdOf(i), Number.parseInt(binaryIdOf(i), 2));
    }
  })();
  db.close();
}

/**
 * Vacuums until every page of both tables is marked all-visible, as they are in a deployment once
 * autovacuum has been by: right after a bulk load, autovacuum's own analyze can hold back the
 * first vacuum, and the index scans then check every row in the table (measured: no page of
 * stream_sessions marked after the first vacuum, every page after the second).
 */
async function allVisible(client: pg.Client): Promise<void> {
  for (let attempt = 0; attempt < 20; attempt++) {
    await client.query('vacuum analyze viewers, stream_sessions');
    const { rows } = await client.query(
      `select bool_and(relallvisible >= relpages) as done from pg_class where relname in ('viewers', 'stream_sessions')`,
    );
    if (rows[0]?.done) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  log('postgres: the tables are still not all-visible after 20 vacuums; measuring as they are');
}

async function seedPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query(`${ORG_ROW} values ('${ORG}', 'bench', '0x0', 'RS256', 'x', 'paid', true, 0, 0, false)`);
  await client.query(`${CONTENT_ROW} values ('${CONTENT}', 'film', 'video', 600000, true, 60, 'ready', 0)`);
  for (let start = 0; start < n; start += 10_000) {
    const ids = Array.from({ length: Math.min(10_000, n - start) }, (_, k) => start + k);
    await client.query(
      `insert into viewers (id, organization_id, external_viewer_id, binary_id, wallet_address, has_own_wallet, total_streams, is_blocked, first_seen, last_seen)
       select v, $1, 'ext-' || i, b, '0x0', false, 1, false, 0, 0 from unnest($2::int[], $3::text[], $4::text[]) as t(i, b, v)`,
      [ORG, ids, ids.map(binaryIdOf), ids.map(viewerIdOf)],
    );
  }
  await client.query(
    `insert into stream_sessions (id, organization_id, api_key_id, content_id, viewer_id, is_active, bytes_served, expires_at, created_at, watermarked, viewer_bits)
     select gen_random_uuid()::text, $1, 'key-1', $2, id, false, 0, 0, 0, true, binary_id::bit(40)::bigint from viewers`,
    [ORG, CONTENT],
  );
  await allVisible(client);
  await client.end();
}

function leakOf(bits: string) {
  const segments = Number(values.segments);
  return Array.from({ length: segments }, (_, s) => ({
    index: s,
    z: (bits[s % 40] === '0' ? 1 : -1) * (6 + 4 * Math.random()),
  }));
}

/** The query drm ran before candidates were paged: every candidate at once, as row objects. */
const ALL_AT_ONCE = (watermarked: string) =>
  `select distinct v.id as "viewerId", v.binary_id as "binaryId" from stream_sessions s join viewers v on v.id = s.viewer_id where s.content_id = '${CONTENT}' and s.watermarked = ${watermarked} order by v.id`;

function rowsReader(target: string, url: string): { read: () => Promise<Candidate[]>; close: () => Promise<void> } {
  if (target === 'sqlite') {
    const db = new BetterSqlite(url.replace(/^sqlite:/, ''), { readonly: true });
    const statement = db.prepare(ALL_AT_ONCE('1'));
    return { read: async () => statement.all() as Candidate[], close: async () => void db.close() };
  }
  const client = new pg.Client({ connectionString: url });
  const connected = client.connect();
  return {
    read: async () => (await connected, (await client.query(ALL_AT_ONCE('true'))).rows as Candidate[]),
    close: () => client.end(),
  };
}

const heapMb = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

interface Way {
  read: number[];
  match: number[];
  heapMb: number;
  outcome: string;
}

/** Times one way of reading and matching, --runs times after a warm-up; heap held while it holds its candidates. */
async function timeWay<T extends object>(
  read: () => Promise<T>,
  match: (c: T) => ReturnType<typeof matchCandidates>,
  size: (c: T) => number,
): Promise<Way> {
  const way: Way = { read: [], match: [], heapMb: 0, outcome: '' };
  const leaker = viewerIdOf(Math.floor(n / 3));
  for (let r = 0; r <= runs; r++) {
    const before = heapMb();
    let started = performance.now();
    const candidates = await read();
    const readMs = performance.now() - started;
    way.heapMb = Math.max(way.heapMb, heapMb() - before);
    started = performance.now();
    const result = match(candidates);
    const matchMs = performance.now() - started;
    way.outcome = `${result.classification}${result.matched?.viewerId === leaker ? ' (the leaker)' : ''}, ${size(candidates)} candidates`;
    if (r === 0) continue; // warm-up
    way.read.push(readMs);
    way.match.push(matchMs);
  }
  return way;
}

async function deployment(target: string, cluster: () => Promise<Cluster>): Promise<{ dir: string; url: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-match-'));
  let url = `sqlite:${path.join(dir, 'drm.db')}`;
  if (target === 'postgres') {
    const admin = (await cluster()).url;
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    await client.query('create database bench_match');
    await client.end();
    url = admin.replace(/\/postgres$/, '/bench_match');
  }
  await (await openContext(dir, url)).db.close();
  const started = performance.now();
  if (target === 'sqlite') seedSqlite(path.join(dir, 'drm.db'));
  else await seedPostgres(url);
  log(`${target}: ${n} viewers and sessions seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return { dir, url };
}

async function measure(target: string, cluster: () => Promise<Cluster>) {
  const { dir, url } = await deployment(target, cluster);
  const ctx = await openContext(dir, url);
  const leak = leakOf(binaryIdOf(Math.floor(n / 3)));
  const paged = await timeWay(
    () => candidatesOf(ctx, { id: CONTENT, segmentRule: 'fixed' }),
    (c) => matchPackedCandidates(leak, c, { mask: 0n, rule: FIXED_RULE }),
    (c) => c.viewerIds.length,
  );
  await ctx.db.close();
  const rows = rowsReader(target, url);
  const before = await timeWay(
    rows.read,
    (c) => matchCandidates(leak, c, { mask: 0n, rule: FIXED_RULE }),
    (c) => c.length,
  );
  await rows.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const total = (w: Way) => median(w.read) + median(w.match);
  return { target, paged, before, ratio: total(paged) / total(before) };
}

async function main(): Promise<void> {
  let cluster: Cluster | undefined;
  const clusterOnce = async () => {
    cluster ??= await startCluster();
    return cluster;
  };
  const rows = [];
  try {
    for (const target of values.targets.split(',')) rows.push(await measure(target, clusterOnce));
  } finally {
    cluster?.stop();
  }
  if (values.json) return void process.stdout.write(`${JSON.stringify({ candidates: n, runs, rows }, null, 2)}\n`);
  process.stdout.write(
    `Reading and matching ${n.toLocaleString('en')} candidates of one item, ${runs} run(s) after a warm-up, medians, ${os.availableParallelism()} CPUs\n`,
  );
  const table = new Table({
    head: [
      'database',
      'candidates read',
      'read ms',
      'match ms',
      'total ms',
      'runs (total)',
      'heap held MB',
      'total / before',
      'outcome',
    ],
    style: { head: [], border: [] },
  });
  for (const r of rows) {
    for (const [name, w] of [
      ['a page at a time, packed', r.paged],
      ['before: all at once, as rows', r.before],
    ] as const) {
      const runsTotal = w.read.map((x, i) => (x + (w.match[i] as number)).toFixed(0)).join(' ');
      const total = median(w.read) + median(w.match);
      table.push([
        r.target,
        name,
        median(w.read).toFixed(0),
        median(w.match).toFixed(0),
        total.toFixed(0),
        runsTotal,
        w.heapMb.toFixed(0),
        w === r.paged ? `${(r.ratio * 100).toFixed(0)}%` : '',
        w.outcome,
      ]);
    }
  }
  process.stdout.write(`${table.toString()}\n`);
}

await main();
