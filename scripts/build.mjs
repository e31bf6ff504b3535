// `npm run build` (and `npm install`, through `prepare`): bundles the TypeScript sources into
// dist/ so that `drm` starts without compiling anything, copies the files the code reads beside
// itself, and stamps the build. bin/drm.js runs dist/ only while the stamp is newer than every
// source; an edited checkout falls back to the sources (through tsx) until it is built again.
//
// A bundle, not a file-by-file compile: a command that loaded some 250 modules (our own and
// drizzle's) now loads a few chunks, which is most of what `drm` spent before doing anything
// (docs/start-up.md). Each command's module stays its own chunk (the dynamic imports of
// commands/main.ts), so a command still loads only what it runs. Type checking is `npm run
// typecheck`'s job; esbuild only strips the types.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const started = Date.now();
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

// Bundled: the pure-JavaScript packages every command loads at start. The rest stay in
// node_modules: native modules (better-sqlite3), packages that find files beside
// themselves (ffmpeg's binaries, koffi's native module), and large ones only some commands load (ink, the AWS SDK).
const BUNDLED = new Set(['commander', 'drizzle-orm']);
const external = Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies })
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`]);

fs.rmSync(dist, { recursive: true, force: true });
await build({
  absWorkingDir: root,
  // the CPU pool's workers load their module by file name, beside the chunk that starts them
  entryPoints: { main: 'commands/main.ts', 'cpu-pool-worker': 'gpu/cpu-pool-worker.ts' },
  outdir: dist,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  jsx: 'automatic',
  external,
  // commander is CommonJS: its require() of Node's modules needs a require in an ES module
  banner: {
    js: "import { createRequire as __drmRequire } from 'node:module'; const require = __drmRequire(import.meta.url);",
  },
  logLevel: 'warning',
});
// read at run time beside the chunk that reads them (import.meta.url)
for (const file of ['commands/completion.bash', 'gpu/worker-entry.mjs']) {
  fs.copyFileSync(path.join(root, file), path.join(dist, path.basename(file)));
}
// the CUDA kernels, read beside the chunk that loads them (gpu/cuda/device.ts)
fs.cpSync(path.join(root, 'gpu/cuda/ptx'), path.join(dist, 'ptx'), { recursive: true });
fs.writeFileSync(path.join(dist, 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);
fs.writeFileSync(path.join(dist, '.built'), `${new Date(started).toISOString()}\n`);
// the stamp says when the build started: a source saved while it ran is newer, so it is not trusted
fs.utimesSync(path.join(dist, '.built'), started / 1000, started / 1000);
console.error(`build: dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
