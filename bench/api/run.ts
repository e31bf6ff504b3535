// API throughput benchmark: `npm run bench:api -- [--runs 3] [--duration 5] [--connections 50] [--json]`.
//
// Loads GET /api/v1/auth/verify and GET /api/v1/catalog of a real `drm serve` (SQLite, then
// Postgres on a private cluster) with autocannon and compares them with a ceiling: a bare hono
// app on @hono/node-server answering a constant JSON, run right before each timed run so that a
// ratio compares two runs under the same load from elsewhere. Every server is a child process, so
// the load generator and the server never share an event loop. Prints numbers; it is not a test
// and does not fail on a missed target. `--cpu-prof DIR` writes a CPU profile of each drm serve.
// `--keys N` spreads the load over N organizations' keys, request by request (default 1: one
// valid key), which shows the server without concurrent requests of one key sharing their
// lookups (src/db/per-turn.ts). `--baseline REV` also runs another commit (a git worktree sharing
// node_modules) on its own database, its runs alternated with this checkout's after the same
// ceiling run, and prints its rows and this checkout's ratio to it. Both then run their sources
// through tsx, so that neither has a build the other lacks. `--log-level L` sets each drm serve's
// level (default info, its own default, so that the access log is in the figures); what a server
// logs goes to a file beside its data directory, as to an operator's log collector.
import autocannon from 'autocannon';
import Table from 'cli-table3';
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { baselineTree } from '../baseline.js';
import { median } from '../stats.js';
import { resolveConfig } from '../../src/config.js';
import { createContext } from '../../src/create-context.js';
import { newId } from '../../src/crypto/tokens.js';
import { setRateLimit } from '../../src/domain/admin/organizations.js';
import { grantLicense } from '../../src/domain/licenses.js';
import { type Cluster, startCluster } from '../../test/helpers/postgres-cluster.js';
import { drm, killAll, ROOT, type ServeProcess, startServe } from '../../test/helpers/serve-process.js';

interface Options {
  runs: number;
  duration: number;
  warmup: number;
  connections: number;
  json: boolean;
  targets: string[];
  keys: number;
  cpuProf?: string;
  baseline?: string;
  logLevel: string;
}

type Target = 'ceiling' | 'sqlite' | 'postgres' | `${'sqlite' | 'postgres'} @ ${string}`;

interface RunFigures {
  rps: number;
  p99: number;
  non2xx: number;
  errors: number;
}

interface Row {
  target: Target;
  endpoint: string;
  /** median over the runs */
  rps: number;
  /** median over the runs, milliseconds */
  p99: number;
  ratio: number;
  goal?: number;
  pass?: boolean;
  /** this checkout's req/s over the baseline's (median of the alternated pairs) */
  vsBaseline?: number;
  non2xx: number;
  errors: number;
  runs: RunFigures[];
}

/** The targets: keyed endpoints keep this share of the ceiling's requests per second. */
const GOALS: Record<Exclude<Target, 'ceiling'>, number> = { sqlite: 0.4, postgres: 0.2 };
const CONTENT_ROWS = 8;
/** The highest hourly limit `drm admin rate-limit` accepts (src/domain/admin/organizations.ts): far above what a run sends. */
const PER_HOUR = '10000000';

function options(): Options {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '2' },
      connections: { type: 'string', default: '50' },
      targets: { type: 'string', default: 'sqlite,postgres' },
      keys: { type: 'string', default: '1' },
      'cpu-prof': { type: 'string' },
      baseline: { type: 'string' },
      'log-level': { type: 'string', default: 'info' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      'usage: npm run bench:api -- [--runs 3] [--duration 5 (s)] [--warmup 2 (s)] [--connections 50]\n' +
        '                           [--targets sqlite,postgres] [--keys 1] [--cpu-prof DIR] [--baseline REV]\n' +
        '                           [--log-level info] [--json]\n',
    );
    process.exit(0);
  }
  const positive = (name: string, v: string) => {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`--${name} must be a positive number, got "${v}"`);
    return n;
  };
  const targets = values.targets.split(',').map((t) => t.trim());
  for (const t of targets)
    if (t !== 'sqlite' && t !== 'postgres') throw new Error(`--targets takes sqlite and/or postgres, got "${t}"`);
  return {
    runs: Math.round(positive('runs', values.runs)),
    duration: positive('duration', values.duration),
    warmup: positive('warmup', values.warmup),
    connections: Math.round(positive('connections', values.connections)),
    json: values.json,
    targets,
    keys: Math.round(positive('keys', values.keys)),
    cpuProf: values['cpu-prof'] ? path.resolve(values['cpu-prof']) : undefined,
    baseline: values.baseline,
    logLevel: values['log-level'],
  };
}

const progress = (msg: string) => process.stderr.write(`bench: ${msg}\n`);

type Figures = Omit<Row, 'target' | 'endpoint' | 'ratio'>;

/** One autocannon run; with keys, each request carries the next key in turn. */
async function once(opts: Options, url: string, keys: string[], duration: number): Promise<RunFigures> {
  let next = 0;
  const requests = keys.length
    ? [
        {
          setupRequest(req: { headers?: Record<string, string> }) {
            req.headers = { ...req.headers, authorization: `Bearer ${keys[next++ % keys.length]}` };
            return req;
          },
        },
      ]
    : undefined;
  const r = await autocannon({ url, requests, connections: opts.connections, pipelining: 1, timeout: 30, duration });
  return { rps: r.requests.average, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors + r.timeouts };
}

function summary(runs: RunFigures[]): Figures {
  return {
    rps: median(runs.map((r) => r.rps)),
    p99: median(runs.map((r) => r.p99)),
    non2xx: runs.reduce((n, r) => n + r.non2xx, 0),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    runs,
  };
}

interface Side {
  url: string;
  keys: string[];
}

/**
 * Warm-up, then `runs` timed runs of the endpoint on each side (this checkout, and the baseline
 * when there is one), each round right after a run of the ceiling: a ratio is the median of its
 * rounds' ratios, so that load from elsewhere on the machine, which drifts over a benchmark,
 * weighs on both sides of each ratio alike. The sides' order is swapped every round.
 */
async function measure(
  opts: Options,
  ceiling: { url: string; runs: RunFigures[] },
  sides: Side[],
): Promise<Array<Figures & { ratio: number }>> {
  for (const side of sides) await once(opts, side.url, side.keys, opts.warmup);
  const runs: RunFigures[][] = sides.map(() => []);
  const ratios: number[][] = sides.map(() => []);
  for (let i = 0; i < opts.runs; i++) {
    const top = await once(opts, ceiling.url, [], opts.duration);
    ceiling.runs.push(top);
    const order = sides.map((_, j) => j);
    if (i % 2) order.reverse();
    for (const j of order) {
      const side = sides[j] as Side;
      const run = await once(opts, side.url, side.keys, opts.duration);
      runs[j]?.push(run);
      ratios[j]?.push(run.rps / top.rps);
    }
  }
  return sides.map((_, j) => ({ ...summary(runs[j] ?? []), ratio: median(ratios[j] ?? []) }));
}

/** The ceiling server in its own process; resolves once it printed its address. */
function startCeiling(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'bench/api/ceiling.ts')], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{') && l.endsWith('}'));
      if (line) resolve({ url: (JSON.parse(line) as { url: string }).url, child });
    });
    child.once('exit', (code) => reject(new Error(`the ceiling server exited (${code}) before listening`)));
    child.once('error', reject);
  });
}

/** `keys` organizations, each with a key, a limit that load cannot reach and a wildcard license; some content. */
async function prepareDrm(
  server: ServeProcess,
  dataDir: string,
  db: string | undefined,
  keys: number,
  cli: (args: string[]) => Promise<string> = drm,
): Promise<string[]> {
  const orgs: Array<{ organizationId: string; apiKey: string }> = [];
  for (let i = 0; i < keys; i++) {
    const res = await fetch(`${server.url}/api/v1/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Bench Films ${i + 1}`, email: 'bench@example.test' }),
    });
    if (res.status !== 201) throw new Error(`register failed: ${res.status} ${await res.text()}`);
    orgs.push((await res.json()) as { organizationId: string; apiKey: string });
  }
  const where = ['--data-dir', dataDir, ...(db ? ['--db', db] : [])];
  // The first organization is set up with the CLI, the rest through the same core calls.
  const first = orgs[0] as { organizationId: string; apiKey: string };
  await cli(['admin', 'rate-limit', '--org', first.organizationId, '--per-hour', PER_HOUR, ...where]);
  await cli(['admin', 'license', '--org', first.organizationId, '--content', '*', '--type', 'video', ...where]);

  // Content rows stand in for ingest: written through the core on the same database, as it is
  // (a baseline's schema is its own, not migrated to this checkout's).
  const ctx = await createContext(resolveConfig({ dataDir, db, logLevel: 'warn' }, {}), { migrate: false });
  try {
    for (const { organizationId } of orgs.slice(1)) {
      await setRateLimit(ctx, organizationId, { rateLimitPerHour: Number(PER_HOUR) });
      await grantLicense(ctx, organizationId, { contentId: '*', contentType: 'video' });
    }
    for (let i = 0; i < CONTENT_ROWS; i++) {
      await ctx.repos.content.insert({
        id: newId(),
        title: `Bench title ${i + 1}`,
        description: 'A film for the benchmark',
        type: 'video',
        duration: 60_000 + i * 1000,
        resolution: '1080p',
        isWatermarked: i % 2 === 0,
        segmentCount: 6,
        storagePath: null,
        status: 'ready',
        createdAt: Date.now(),
      });
    }
  } finally {
    await ctx.db.close();
  }

  for (const { apiKey } of orgs) {
    const auth = { authorization: `Bearer ${apiKey}` };
    const verify = await fetch(`${server.url}/api/v1/auth/verify`, { headers: auth });
    if (verify.status !== 200 || verify.headers.get('x-ratelimit-limit') !== PER_HOUR) {
      throw new Error(
        `verify is not ready for load: ${verify.status} limit ${verify.headers.get('x-ratelimit-limit')}`,
      );
    }
    const catalog = (await (await fetch(`${server.url}/api/v1/catalog`, { headers: auth })).json()) as {
      content?: unknown[];
    };
    if (catalog.content?.length !== CONTENT_ROWS)
      throw new Error(`catalog lists ${catalog.content?.length} items, expected ${CONTENT_ROWS}`);
  }
  return orgs.map((o) => o.apiKey);
}

async function createDatabase(clusterUrl: string, name: string): Promise<string> {
  const pg = (await import('pg')).default;
  const client = new pg.Client({ connectionString: clusterUrl });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  return clusterUrl.replace(/\/postgres$/, `/${name}`);
}

/** One drm serve of a checkout (this one or the baseline's), prepared for load: its keys. */
async function startSide(
  opts: Options,
  target: 'sqlite' | 'postgres',
  label: string,
  tree: string,
  dataDir: string,
  databases: (name: string) => Promise<string | undefined>,
): Promise<{ server: ServeProcess; keys: string[] }> {
  const db = await databases(tree === ROOT ? 'drm_bench' : 'drm_baseline');
  const bin = path.join(tree, 'bin/drm.js');
  // with a baseline, both run their sources: the baseline may predate the build in dist/
  const env = opts.baseline ? { DRM_FROM_SOURCE: '1' } : {};
  progress(`${target}: starting drm serve (${label})`);
  const server = await startServe({
    dataDir,
    db,
    bin,
    env,
    // drm serve's own default (info) writes the access log: a line per request, to a file as
    // an operator's collector would take it.
    logLevel: opts.logLevel,
    stderrTo: `${dataDir}.log`,
    // --keys N registers N organizations from this one address.
    args: ['--register-limit', String(Math.max(20, opts.keys))],
    nodeArgs:
      opts.cpuProf && tree === ROOT
        ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProf, '--cpu-prof-name', `drm-serve-${target}.cpuprofile`]
        : [],
  });
  const cli = async (args: string[]) =>
    execFileSync(process.execPath, [bin, ...args], { cwd: tree, encoding: 'utf8', env: { ...process.env, ...env } });
  return { server, keys: await prepareDrm(server, dataDir, db, opts.keys, cli) };
}

function printTable(rows: Row[], opts: Options): void {
  const table = new Table({
    head: ['target', 'endpoint', 'req/s', 'p99 ms', 'of ceiling', 'goal', 'result', 'vs baseline', 'non-2xx/errors'],
    style: { head: [], border: [] },
    colAligns: ['left', 'left', 'right', 'right', 'right', 'right', 'left', 'right', 'right'],
  });
  for (const r of rows) {
    table.push([
      r.target,
      r.endpoint,
      Math.round(r.rps).toLocaleString('en-US'),
      r.p99.toFixed(1),
      `${(r.ratio * 100).toFixed(1)}%`,
      r.goal === undefined ? '' : `≥ ${r.goal * 100}%`,
      r.pass === undefined ? '' : r.pass ? 'PASS' : 'FAIL',
      r.vsBaseline === undefined ? '' : `${r.vsBaseline.toFixed(2)}×`,
      `${r.non2xx}/${r.errors}`,
    ]);
  }
  process.stdout.write(
    `API benchmark: ${opts.connections} connections, ${opts.keys} key(s), ${opts.runs} run(s) of ${opts.duration} s after ${opts.warmup} s warm-up; ` +
      `medians; "of ceiling" is the median ratio to a ceiling run taken just before each run; ` +
      `drm serve at log level ${opts.logLevel}; ` +
      `${os.cpus().length} CPUs, Node ${process.version}\n${table.toString()}\n`,
  );
}

async function main(): Promise<void> {
  const opts = options();
  const temp = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-'));
  const children: ChildProcess[] = [];
  const servers: ServeProcess[] = [];
  let cluster: Cluster | undefined;
  let baseline: ReturnType<typeof baselineTree> | undefined;
  // Whatever happens (an error, Ctrl-C), no server and no Postgres cluster outlives the benchmark.
  const emergency = () => {
    killAll();
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    cluster?.stop();
    cluster = undefined;
    baseline?.remove();
    baseline = undefined;
    fs.rmSync(temp, { recursive: true, force: true });
  };
  process.once('exit', emergency);
  process.once('SIGINT', () => {
    emergency();
    process.exit(130);
  });
  if (opts.cpuProf) fs.mkdirSync(opts.cpuProf, { recursive: true });

  const rows: Row[] = [];
  try {
    progress('ceiling: bare hono on @hono/node-server');
    const started = await startCeiling();
    children.push(started.child);
    const ceiling = { url: `${started.url}/`, runs: [] as RunFigures[] };
    await once(opts, ceiling.url, [], opts.warmup);
    for (let i = 0; i < opts.runs; i++) ceiling.runs.push(await once(opts, ceiling.url, [], opts.duration));
    progress(`ceiling: ${Math.round(median(ceiling.runs.map((r) => r.rps)))} req/s`);

    baseline = opts.baseline ? baselineTree(ROOT, opts.baseline, path.join(temp, 'baseline')) : undefined;
    for (const target of opts.targets as Array<'sqlite' | 'postgres'>) {
      let databases: (name: string) => Promise<string | undefined> = async () => undefined;
      if (target === 'postgres') {
        progress('postgres: starting a private cluster');
        const started = await startCluster();
        cluster = started;
        databases = (name) => createDatabase(started.url, name);
      }
      const sides = [await startSide(opts, target, 'this checkout', ROOT, path.join(temp, target), databases)];
      servers.push(sides[0]?.server as ServeProcess);
      if (baseline) {
        const dataDir = path.join(temp, `${target}-baseline`);
        sides.push(await startSide(opts, target, `baseline ${opts.baseline}`, baseline.dir, dataDir, databases));
        servers.push(sides[1]?.server as ServeProcess);
      }
      for (const endpoint of ['/api/v1/auth/verify', '/api/v1/catalog']) {
        progress(`${target}: GET ${endpoint}`);
        const sideRuns = sides.map((side) => ({ url: `${side.server.url}${endpoint}`, keys: side.keys }));
        const [mine, theirs] = await measure(opts, ceiling, sideRuns);
        const goal = GOALS[target];
        const m = mine as Figures & { ratio: number };
        const vsBaseline = theirs
          ? median(m.runs.map((r, i) => r.rps / (theirs.runs[i]?.rps ?? Number.NaN)))
          : undefined;
        rows.push({ target, endpoint: `GET ${endpoint}`, goal, pass: m.ratio >= goal, vsBaseline, ...m });
        if (theirs) rows.push({ target: `${target} @ ${opts.baseline}`, endpoint: `GET ${endpoint}`, ...theirs });
        progress(`${target}: GET ${endpoint}: ${Math.round(m.rps)} req/s (${(m.ratio * 100).toFixed(1)}% of ceiling)`);
      }
      for (const side of sides) {
        const exit = await side.server.stop();
        if (exit.code !== 0)
          progress(`${target}: drm serve exited ${exit.code ?? exit.signal}:\n${side.server.stderr().slice(-4000)}`);
      }
      cluster?.stop();
      cluster = undefined;
    }
    // The ceiling's row: every run of it, the first ones and those paired with the endpoints.
    rows.unshift({ target: 'ceiling', endpoint: 'GET / (constant JSON)', ratio: 1, ...summary(ceiling.runs) });
  } finally {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(servers.map((s) => s.stop('SIGTERM', 10_000)));
    emergency();
  }

  if (opts.json) {
    process.stdout.write(
      `${JSON.stringify({ connections: opts.connections, keys: opts.keys, runs: opts.runs, duration: opts.duration, warmup: opts.warmup, cpus: os.cpus().length, node: process.version, results: rows }, null, 2)}\n`,
    );
  } else printTable(rows, opts);
  if (opts.cpuProf) progress(`CPU profiles of drm serve in ${opts.cpuProf}`);
}

await main();
