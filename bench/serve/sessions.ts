import autocannon from 'autocannon';
import BetterSqlite from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { exportSPKI, generateKeyPair, SignJWT } from 'jose';
import pg from 'pg';
import { drm, type ServeProcess } from '../../test/helpers/serve-process.js';
import { median } from '../stats.js';

// Sessions per second through `drm serve`: POST /api/v1/stream/{id} with
// RS256 viewer tokens signed beforehand, 10 connections. Each run takes --sessions fresh tokens
// (first-time viewers: a viewer, its id and wallet are made) and then the same tokens again
// (returning viewers); beside them, in the same run, the floor: bare one-row insert transactions
// on the same kind of database, so a slower machine or disk shows in both.

const LIMITS = ['--per-hour', '10000000', '--monthly-streams', '100000000'];
const CONNECTIONS = 10;
export const CONNECTIONS_NOTE = `${CONNECTIONS} connections`;

export interface Rate {
  perSecond: number;
  p99: number;
  non2xx: number;
}

export interface SessionFigures {
  firstTime: Rate;
  returning: Rate;
  /** bare insert transactions a second (median) */
  floor: number;
  runs: Array<{ firstTime: Rate; returning: Rate; floor: number }>;
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

export async function benchOrganization(server: ServeProcess, dataDir: string, db: string[], contentId: string) {
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const org = await json<{ organizationId: string; apiKey: string }>(
    await fetch(`${server.url}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'Bench Org',
        email: 'ops@bench.test',
        signingPublicKey: await exportSPKI(publicKey),
        signingAlgorithm: 'RS256',
      }),
    }),
  );
  await drm([
    'admin',
    'license',
    '--org',
    org.organizationId,
    '--content',
    contentId,
    '--type',
    'video',
    '--watermark',
    '--data-dir',
    dataDir,
    ...db,
  ]);
  await drm(['admin', 'rate-limit', '--org', org.organizationId, ...LIMITS, '--data-dir', dataDir, ...db]);
  return { org, privateKey };
}

/** Every token once, over 10 connections: the rate is the requests answered over the wall time they took. */
async function postSessions(url: string, apiKey: string, tokens: readonly string[]): Promise<Rate> {
  let next = 0;
  const started = performance.now();
  let lastAnswer = started;
  const res = await autocannon({
    url,
    method: 'POST',
    connections: CONNECTIONS,
    amount: tokens.length,
    timeout: 30,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => ({ ...req, body: JSON.stringify({ viewerToken: tokens[next++ % tokens.length] }) }),
        onResponse: () => {
          lastAnswer = performance.now();
        },
      },
    ],
  });
  // Up to the last answer: autocannon's own duration, and its promise, run to a whole second.
  const seconds = (lastAnswer - started) / 1000;
  return {
    perSecond: res.requests.total / seconds,
    p99: res.latency.p99,
    non2xx: res.non2xx + res.errors + res.timeouts,
  };
}

/** One-row insert transactions for `seconds`: on a SQLite file beside drm's (same pragmas), or on the Postgres server over 10 connections. */
export async function bareInsertsPerSecond(
  target: { sqliteDir: string } | { postgresUrl: string },
  seconds = 3,
): Promise<number> {
  const body = 'x'.repeat(200);
  if ('sqliteDir' in target) {
    const db = new BetterSqlite(path.join(target.sqliteDir, `floor-${randomUUID()}.db`));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('create table rows (id text primary key, body text not null)');
    const insert = db.prepare('insert into rows (id, body) values (?, ?)');
    let n = 0;
    const end = performance.now() + seconds * 1000;
    for (; performance.now() < end; n++) {
      db.exec('BEGIN IMMEDIATE');
      insert.run(randomUUID(), body);
      db.exec('COMMIT');
      // Yield now and then, as a server would between requests.
      if (n % 100 === 0) await new Promise((r) => setImmediate(r));
    }
    db.close();
    return n / seconds;
  }
  const pool = new pg.Pool({ connectionString: target.postgresUrl, max: CONNECTIONS });
  const table = `floor_${randomUUID().replaceAll('-', '')}`;
  await pool.query(`create table ${table} (id text primary key, body text not null)`);
  let n = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      const client = await pool.connect();
      for (; performance.now() < end; n++) {
        await client.query('begin');
        await client.query(`insert into ${table} (id, body) values ($1, $2)`, [randomUUID(), body]);
        await client.query('commit');
      }
      client.release();
    }),
  );
  await pool.query(`drop table ${table}`);
  await pool.end();
  return n / seconds;
}

export async function sessionsPerSecond(
  o: {
    server: ServeProcess;
    dataDir: string;
    db: string[];
    contentId: string;
    runs: number;
    perRun: number;
    log: (m: string) => void;
  },
  floor: () => Promise<number>,
): Promise<SessionFigures> {
  const { org, privateKey } = await benchOrganization(o.server, o.dataDir, o.db, o.contentId);
  const exp = Math.floor(Date.now() / 1000) + 3600;
  o.log(`signing ${o.runs * o.perRun} RS256 viewer tokens`);
  const sign = (i: number) =>
    new SignJWT({})
      .setProtectedHeader({ alg: 'RS256' })
      .setSubject(`viewer-${i}`)
      .setExpirationTime(exp)
      .sign(privateKey);
  const tokens = await Promise.all(Array.from({ length: o.runs * o.perRun }, (_, i) => sign(i)));
  const url = `${o.server.url}/api/v1/stream/${o.contentId}`;
  const runs: SessionFigures['runs'] = [];
  for (let r = 0; r < o.runs; r++) {
    const mine = tokens.slice(r * o.perRun, (r + 1) * o.perRun);
    const firstTime = await postSessions(url, org.apiKey, mine);
    const returning = await postSessions(url, org.apiKey, mine);
    const floorRate = await floor();
    runs.push({ firstTime, returning, floor: floorRate });
    o.log(
      `sessions run ${r + 1}: first-time ${firstTime.perSecond.toFixed(0)}/s, returning ${returning.perSecond.toFixed(0)}/s (non-2xx ${firstTime.non2xx + returning.non2xx}); bare insert transactions ${floorRate.toFixed(0)}/s`,
    );
  }
  const rate = (pick: (run: SessionFigures['runs'][number]) => Rate): Rate => ({
    perSecond: median(runs.map((x) => pick(x).perSecond)),
    p99: median(runs.map((x) => pick(x).p99)),
    non2xx: runs.reduce((n, x) => n + pick(x).non2xx, 0),
  });
  return {
    firstTime: rate((x) => x.firstTime),
    returning: rate((x) => x.returning),
    floor: median(runs.map((x) => x.floor)),
    runs,
  };
}
