// `npm run build` (and `npm install`, through `prepare`): compiles the TypeScript sources to
// dist/ so that `drm` starts without compiling anything, copies the files the code reads beside
// itself, and stamps the build. bin/drm.js runs dist/ only while the stamp is newer than every
// source; an edited checkout falls back to the sources (through tsx) until it is built again.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
const started = Date.now();
fs.rmSync(dist, { recursive: true, force: true });
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (!fs.existsSync(tsc)) {
  // an install without dev dependencies: drm runs its sources through tsx instead, only slower to start
  console.error('build: typescript is not installed (npm install --omit=dev?); drm will run from its sources');
  process.exit(0);
}
execFileSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit', cwd: root });
// read at run time next to the module that reads them
for (const file of ['commands/completion.bash', 'gpu/worker-entry.mjs']) {
  fs.copyFileSync(path.join(root, file), path.join(dist, file));
}
fs.writeFileSync(path.join(dist, 'package.json'), `${JSON.stringify({ type: 'module' })}\n`);
fs.writeFileSync(path.join(dist, '.built'), `${new Date(started).toISOString()}\n`);
// the stamp says when the build started: a source saved while it ran is newer, so it is not trusted
fs.utimesSync(path.join(dist, '.built'), started / 1000, started / 1000);
console.error(`build: dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
