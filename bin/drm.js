#!/usr/bin/env node
// The `drm` entry point. TypeScript sources run through tsx's loader, so `npm install` is the
// whole set-up; this file and commands/main.ts are the only places that end the process.
import { fileURLToPath } from 'node:url';
import { register } from 'tsx/esm/api';

// The repository's tsconfig wherever drm is run from (tsx would look in the working directory),
// so that its settings (the React JSX transform of drm top) always apply.
register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
// A reader that stops early (`drm jobs list | head -3`) closes the pipe: the rest of the output
// was not wanted, which is no error and deserves no stack trace. The command goes on and ends
// with its own exit code (a weak match is still 2); only stdout, the data, is treated so.
process.stdout.on('error', (err) => {
  if (err.code !== 'EPIPE') throw err;
  process.stdout.write = () => true;
});
const { main } = await import('../commands/main.ts');
process.exitCode = await main(process.argv);
