// Entry point of every CPU-pool worker thread. A worker starts as plain Node, without the tsx loader
// its parent may have (bin/drm.js registers tsx in-process, vitest uses its own transformer, and
// `--import tsx` in a Worker's execArgv does not apply to the worker's main module), so this plain
// JavaScript file registers tsx when the worker module named in workerData is TypeScript, then imports
// it. A built worker (dist/, or a bundle that carries no node_modules) needs no tsx.
// Registering again where tsx is already active (`node --import tsx`) is harmless.
import { workerData } from 'node:worker_threads';

if (workerData.module.endsWith('.ts')) {
  const { register } = await import('tsx/esm/api');
  register();
}
await import(workerData.module);
