import Table from 'cli-table3';
import path from 'node:path';
import { drm, type ServeProcess, startServe } from '../../test/helpers/serve-process.js';
import { median } from '../stats.js';
import { mirrorForNginx } from './mirror.js';
import { findNginx, type Nginx, startNginx } from './nginx.js';
import { drmSession, type OpenSession, play, type Tally } from './players.js';
import { cpuSeconds, machineBusySeconds } from './proc-cpu.js';
import { benchOrganization } from './sessions.js';
import { startStore, type StoreProcess } from './store.js';

// Part 3 of bench:serve: content in an S3-compatible store (s3rver, a child process of
// its own), N players playing whole sessions through one `drm serve` in proxy mode (the server
// streams each segment from the store) and through another in redirect mode (a 302 to a presigned
// URL: the bytes come from s3rver), beside nginx serving the same playlists and segment files
// from disk. Each run measures the three in turn; every figure is the median over the runs. CPU
// is read from /proc for each process: the server's own (the figure that carries over to bigger
// machines), s3rver's and the load generator's, per GB the players received.

export type Mode = 'proxy' | 'redirect' | 'nginx';
export const MODES: readonly Mode[] = ['proxy', 'redirect', 'nginx'];

export interface Measured extends Tally {
  serverCpu: number;
  storeCpu: number;
  loadCpu: number;
  /** the whole machine's busy CPU seconds over the run: what exceeds the three above is the kernel's network work and anything else running */
  machineCpu: number;
}

export interface Figures {
  sessionsPerSecond: number;
  segmentsPerSecond: number;
  mbPerSecond: number;
  /** the server's own CPU seconds (user + system) per GB the players received */
  serverCpuPerGb: number;
  storeCpuPerGb: number;
  loadCpuPerGb: number;
  /** the server's CPU seconds per wall second: the cores it kept busy */
  serverCores: number;
  /** MB/s over nginx's in the same run (median of the runs' ratios) */
  vsNginx?: number;
  errors: number;
}

export interface DeliveryResult {
  players: number;
  plays: number;
  segmentsPerSession: number;
  mbPerSession: number;
  cpus: number;
  nginx?: string;
  figures: Partial<Record<Mode, Figures>>;
  runs: Array<Partial<Record<Mode, Measured>>>;
}

export interface DeliveryOptions {
  input: string;
  players: number;
  plays: number;
  runs: number;
  work: string;
  cpus: number;
  log: (m: string) => void;
}

interface Target {
  open: OpenSession;
  pid: number;
  children: boolean;
}

/** One mode's run: the players play, and each process's CPU is read before and after. */
async function measure(t: Target, store: StoreProcess, players: number, plays: number): Promise<Measured> {
  const server0 = cpuSeconds(t.pid, t.children);
  const store0 = cpuSeconds(store.pid);
  const load0 = process.cpuUsage();
  const machine0 = machineBusySeconds();
  const tally = await play(players, plays, t.open);
  const load = process.cpuUsage(load0);
  const machineCpu = machineBusySeconds() - machine0;
  return {
    ...tally,
    serverCpu: cpuSeconds(t.pid, t.children) - server0,
    storeCpu: cpuSeconds(store.pid) - store0,
    loadCpu: (load.user + load.system) / 1e6,
    machineCpu,
  };
}

function figures(runs: Array<Partial<Record<Mode, Measured>>>, mode: Mode): Figures {
  const of = (f: (m: Measured) => number) => median(runs.map((r) => f(r[mode] as Measured)));
  const gb = (m: Measured) => m.bytes / 1e9;
  const withNginx = runs.filter((r) => r.nginx);
  return {
    sessionsPerSecond: of((m) => m.sessions / m.seconds),
    segmentsPerSecond: of((m) => m.segments / m.seconds),
    mbPerSecond: of((m) => m.bytes / 1e6 / m.seconds),
    serverCpuPerGb: of((m) => m.serverCpu / gb(m)),
    storeCpuPerGb: of((m) => m.storeCpu / gb(m)),
    loadCpuPerGb: of((m) => m.loadCpu / gb(m)),
    serverCores: of((m) => m.serverCpu / m.seconds),
    ...(withNginx.length > 0 && {
      vsNginx: median(
        withNginx.map(
          (r) =>
            (r[mode] as Measured).bytes /
            (r[mode] as Measured).seconds /
            ((r.nginx as Measured).bytes / (r.nginx as Measured).seconds),
        ),
      ),
    }),
    errors: runs.reduce((n, r) => n + (r[mode] as Measured).errors, 0),
  };
}

/** A run's MB/s, and the cores busy: the bench's three processes, and the whole machine (the rest: the kernel's network work, anything else running). */
function runLine(mode: Mode, m: Measured): string {
  const cores = (x: number) => (x / m.seconds).toFixed(2);
  return `${mode} ${(m.bytes / 1e6 / m.seconds).toFixed(0)} MB/s, cores busy: server ${cores(m.serverCpu)} s3rver ${cores(m.storeCpu)} load ${cores(m.loadCpu)} machine ${cores(m.machineCpu)}`;
}

/** Ingests the input watermarked into the bucket and starts the two servers, one per delivery mode. */
async function servers(o: DeliveryOptions, store: StoreProcess) {
  const dataDir = path.join(o.work, 'delivery-data');
  o.log(`delivery: ingesting ${o.input} with --watermark into s3rver (${store.endpoint})`);
  await drm(['migrate', '--data-dir', dataDir], store.env);
  const ingested = await drm(
    ['ingest', o.input, '--title', 'bench', '--type', 'video', '--watermark', '--data-dir', dataDir, '--json'],
    store.env,
  );
  const contentId = (JSON.parse(ingested) as { contentId: string }).contentId;
  const proxy = await startServe({ dataDir, env: { ...store.env, DRM_SEGMENT_DELIVERY: 'proxy' } });
  const redirect = await startServe({ dataDir, env: { ...store.env, DRM_SEGMENT_DELIVERY: 'redirect' } });
  const { org } = await benchOrganization(proxy, dataDir, [], contentId);
  return { contentId, proxy, redirect, apiKey: org.apiKey };
}

export async function deliveryBesideNginx(o: DeliveryOptions): Promise<DeliveryResult> {
  const store = await startStore(o.work);
  const started: Array<ServeProcess | Nginx> = [];
  try {
    const { contentId, proxy, redirect, apiKey } = await servers(o, store);
    started.push(proxy, redirect);
    const root = path.join(o.work, 'nginx-root');
    const segmentsPerSession = await mirrorForNginx({ base: proxy.url, contentId, apiKey, players: o.players, root });
    const targets: Partial<Record<Mode, Target>> = {
      proxy: { open: drmSession(proxy.url, contentId, apiKey), pid: proxy.child.pid as number, children: false },
      redirect: {
        open: drmSession(redirect.url, contentId, apiKey),
        pid: redirect.child.pid as number,
        children: false,
      },
    };
    const binary = findNginx();
    if (binary) {
      const nginx = await startNginx(binary, root, o.work);
      started.push(nginx);
      targets.nginx = { open: async (p) => `${nginx.url}/p/${p}.m3u8`, pid: nginx.child.pid as number, children: true };
    } else o.log('delivery: nginx is not installed (apt-get install nginx-light): the nginx row is skipped');
    const modes = MODES.filter((m) => targets[m]);
    o.log(`delivery: ${o.players} players, ${segmentsPerSession} segments a session; warming up (one session each)`);
    for (const m of modes) await play(o.players, 1, (targets[m] as Target).open);
    const runs: DeliveryResult['runs'] = [];
    for (let r = 0; r < o.runs; r++) {
      const run: Partial<Record<Mode, Measured>> = {};
      for (const m of [...modes].reverse()) run[m] = await measure(targets[m] as Target, store, o.players, o.plays);
      runs.push(run);
      o.log(`delivery run ${r + 1}: ${modes.map((m) => runLine(m, run[m] as Measured)).join('; ')}`);
    }
    const first = runs[0]?.proxy as Measured;
    return {
      players: o.players,
      plays: o.plays,
      segmentsPerSession,
      mbPerSession: first.bytes / 1e6 / (o.players * o.plays),
      cpus: o.cpus,
      ...(binary && { nginx: binary }),
      figures: Object.fromEntries(modes.map((m) => [m, figures(runs, m)])),
      runs,
    };
  } finally {
    for (const s of started) await s.stop();
    await store.stop();
  }
}

const NAMES: Record<Mode, string> = {
  proxy: 'drm serve, proxy (s3rver behind)',
  redirect: 'drm serve, 302 to s3rver',
  nginx: 'nginx, same files from disk',
};

/** The delivery part's table, with the line that says what shares the cores. */
export function deliveryTable(d: DeliveryResult, runs: number): string {
  const head = `delivery: ${d.players} players × ${d.plays} sessions each (POST, playlist, ${d.segmentsPerSession} segments: ${d.mbPerSession.toFixed(1)} MB a session), medians of ${runs} runs; the load generator (one Node process), s3rver and the server share the same ${d.cpus} CPUs\n`;
  const t = new Table({
    head: [
      '',
      'sessions/s',
      'segments/s',
      'MB/s',
      'MB/s vs nginx',
      'server CPU-s/GB',
      'server cores busy',
      's3rver CPU-s/GB',
      'load gen CPU-s/GB',
      'errors',
    ],
    style: { head: [], border: [] },
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
  });
  for (const m of MODES) {
    const f = d.figures[m];
    if (!f) continue;
    const pct = f.vsNginx === undefined ? '–' : `${(100 * f.vsNginx).toFixed(0)}%`;
    const store = m === 'nginx' ? '–' : f.storeCpuPerGb.toFixed(1);
    t.push([
      NAMES[m],
      f.sessionsPerSecond.toFixed(2),
      f.segmentsPerSecond.toFixed(1),
      f.mbPerSecond.toFixed(0),
      pct,
      f.serverCpuPerGb.toFixed(2),
      f.serverCores.toFixed(2),
      store,
      f.loadCpuPerGb.toFixed(1),
      f.errors,
    ]);
  }
  const skipped = d.nginx ? '' : 'nginx row skipped: nginx is not installed (apt-get install nginx-light)\n';
  return `${head}${t.toString()}\n${skipped}`;
}
