#!/usr/bin/env node
// The `drm` entry point; this file and commands/main.ts are the only places that end the process.
// It runs the compiled JavaScript in dist/ (made by `npm install` through `prepare`, or `npm run
// build`) when that build is newer than every source file, so a command starts without compiling
// anything. Otherwise (an edited checkout, DRM_FROM_SOURCE=1) the TypeScript sources run through
// tsx's loader, as the tests do.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCES = ['commands', 'server', 'src', 'gpu'];

/** The build's stamp is newer than every file of the sources (a walk of a few hundred files: ~6 ms). */
function builtAndFresh() {
  let built;
  try {
    built = fs.statSync(path.join(root, 'dist', '.built')).mtimeMs;
  } catch {
    return false;
  }
  for (const dir of SOURCES) {
    for (const entry of fs.readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && fs.statSync(path.join(entry.parentPath ?? entry.path, entry.name)).mtimeMs > built)
        return false;
    }
  }
  return true;
}

// A reader that stops early (`drm jobs list | head -3`) closes the pipe: the rest of the output
// was not wanted, which is no error and deserves no stack trace. The command goes on and ends
// with its own exit code (a weak match is still 2); only stdout, the data, is treated so.
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err;
  process.stdout.write = () => true;
});

// The pinned AWS SDK supports Node 20 (docs/architecture.md); its notice is about its releases
// after January 2027, and would otherwise be printed by every command that opens an s3:// store.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

// `drm --version` alone is answered here: the version is all it needs, so it need not load a command.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  process.stdout.write(`${JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).version}\n`);
} else {
  process.exitCode = await (await loadMain())(process.argv);
}

async function loadMain() {
  if (process.env.DRM_FROM_SOURCE !== '1' && builtAndFresh()) return (await import('../dist/main.js')).main;
  // The repository's tsconfig wherever drm is run from (tsx would look in the working directory),
  // so that its settings (the React JSX transform of drm top) always apply.
  const { register } = await import('tsx/esm/api');
  register({ tsconfig: path.join(root, 'tsconfig.json') });
  return (await import('../commands/main.ts')).main;
}
