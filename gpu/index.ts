/**
 * Picks the DTCWT backend for this process. Watermark code asks for one here and only sees the
 * DtcwtBackend interface; `drm ingest` prints `backend.name` so a run says what it ran on.
 *
 * The tfjs backend is imported dynamically: `@tensorflow/tfjs-node-gpu` is an optional dependency
 * (DESIGN.md), and even pure-JS tfjs is a large module that CPU-only runs need not load.
 */
import type { DtcwtBackend } from './backend.js';
import { type CpuPoolOptions, createCpuPoolBackend } from './cpu-pool.js';

export type { DtcwtBackend, FilterNames, Frame, Transform } from './backend.js';
export { createCpuDirectBackend } from './cpu-direct.js';
export { CpuPoolBackend, type CpuPoolOptions, createCpuPoolBackend } from './cpu-pool.js';

/**
 * 'cpu': the worker pool. 'tfjs': tensor ops, on tfjs-node-gpu if installed, else on tfjs's
 * pure-JS cpu backend (slower than the pool; for tests and comparison). 'auto': tfjs only where
 * tfjs-node-gpu is present, since only a GPU makes it faster than the pool.
 */
export type DtcwtBackendKind = 'cpu' | 'tfjs' | 'auto';

export interface DtcwtBackendOptions extends CpuPoolOptions {}

export async function createDtcwtBackend(
  kind: DtcwtBackendKind = 'auto',
  options: DtcwtBackendOptions = {},
): Promise<DtcwtBackend> {
  switch (kind) {
    case 'cpu':
      return createCpuPoolBackend(options);
    case 'tfjs': {
      const { createTfjsBackend } = await import('./tfjs/backend.js');
      return createTfjsBackend();
    }
    case 'auto': {
      const { loadTfjsNodeGpu, createTfjsBackend } = await import('./tfjs/backend.js');
      return (await loadTfjsNodeGpu()) ? createTfjsBackend() : createCpuPoolBackend(options);
    }
    default:
      throw new RangeError(`unknown DTCWT backend ${JSON.stringify(kind satisfies never)}`);
  }
}
