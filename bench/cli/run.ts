// `npm run bench:cli`: how long drm takes to start, against `node -e 0` in the same run (median of
// 10 each): `drm --version`, `drm admin license …` on SQLite, and `drm serve` on a new SQLite
// deployment until it answers /ready. Each command runs from the build in dist/ (what `npm install`
// makes) and from the sources through tsx (DRM_FROM_SOURCE=1, what every start paid before).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveConfig } from '../../src/config.js';
import { createContext } from '../../src/create-context.js';
import { registerOrganization } from '../../src/domain/organizations.js';
import { createLogger } from '../../src/log.js';
import { median } from '../stats.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const DRM = path.join(ROOT, 'bin/drm.js');
const RUNS = Number(process.env.BENCH_RUNS ?? 10);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-cli-'));

/** Milliseconds from spawn to exit of one run. */
function timed(args: string[], env: NodeJS.ProcessEnv): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr}`);
  return performance.now() - started;
}

/** Milliseconds from spawn until a new deployment's drm serve answers /ready. */
async function serveUntilReady(env: NodeJS.ProcessEnv, i: number): Promise<number> {
  const dataDir = path.join(dir, `serve-${env.DRM_FROM_SOURCE ?? 'dist'}-${i}`);
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [DRM, 'serve', '--port', '0', '--data-dir', dataDir, '--json', '--log-level', 'error'],
    {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('\n')) resolve((JSON.parse(out.split('\n')[0] as string) as { url: string }).url);
    });
    child.once('exit', (code) => reject(new Error(`drm serve exited ${code}`)));
  });
  while ((await fetch(`${url}/ready`).catch(() => undefined))?.status !== 200)
    await new Promise((r) => setTimeout(r, 5));
  const ms = performance.now() - started;
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  return ms;
}

execFileSync(process.execPath, [path.join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
const ctx = await createContext(resolveConfig({ dataDir: path.join(dir, 'admin'), logLevel: 'silent' }, {}), {
  log: createLogger('silent'),
});
const org = (await registerOrganization(ctx, { name: 'Bench' }, 'paid')).organization.id;
await ctx.db.close();
const license = [
  DRM,
  'admin',
  'license',
  '--org',
  org,
  '--content',
  '*',
  '--type',
  'video',
  '--data-dir',
  path.join(dir, 'admin'),
];

const rows: string[][] = [];
const nodeMs = median(Array.from({ length: RUNS }, () => timed(['-e', '0'], {})));
for (const [name, from] of [
  ['dist/ (built)', {}],
  ['sources (tsx)', { DRM_FROM_SOURCE: '1' }],
] as const) {
  const version = median(Array.from({ length: RUNS }, () => timed([DRM, '--version'], from)));
  const admin = median(Array.from({ length: RUNS }, () => timed(license, from)));
  const serves: number[] = [];
  for (let i = 0; i < RUNS; i++) serves.push(await serveUntilReady(from, i));
  const serve = median(serves);
  const x = (ms: number) => `${ms.toFixed(0)} ms (${(ms / nodeMs).toFixed(2)}×)`;
  rows.push([name, x(version), x(admin), `${(serve / 1000).toFixed(2)} s`]);
}
console.log(
  `\nnode -e 0: ${nodeMs.toFixed(0)} ms (median of ${RUNS}); drm on ${os.cpus().length} cores, Node ${process.version}\n`,
);
console.log(
  '| drm runs from | `drm --version` | `drm admin license` on SQLite | `drm serve`, new deployment, until /ready |',
);
console.log('|---|---|---|---|');
for (const r of rows) console.log(`| ${r.join(' | ')} |`);
fs.rmSync(dir, { recursive: true, force: true });
