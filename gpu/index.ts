/**
 * Picks the DTCWT backend for this process. Watermark code asks for one here and only sees the
 * DtcwtBackend interface; `drm ingest` prints `backend.name` so a run says what it ran on.
 *
 * Only the CPU pool exists so far. The tfjs backend (DESIGN.md: `@tensorflow/tfjs-node-gpu` as an
 * optional dependency, loaded only when present) will slot in here; the function is async already
 * because that backend has to be imported dynamically.
 */
import type { DtcwtBackend } from './backend.js';
import { type CpuPoolOptions, createCpuPoolBackend } from './cpu-pool.js';

export type { DtcwtBackend, FilterNames, Frame, Transform } from './backend.js';
export { createCpuDirectBackend } from './backend.js';
export { CpuPoolBackend, type CpuPoolOptions, createCpuPoolBackend } from './cpu-pool.js';

/** 'cpu': the worker pool. 'auto': the fastest backend present, which for now is the CPU pool. */
export type DtcwtBackendKind = 'cpu' | 'auto';

export interface DtcwtBackendOptions extends CpuPoolOptions {}

export async function createDtcwtBackend(kind: DtcwtBackendKind = 'auto', options: DtcwtBackendOptions = {}): Promise<DtcwtBackend> {
  switch (kind) {
    case 'cpu':
    case 'auto':
      return createCpuPoolBackend(options);
    default:
      throw new RangeError(`unknown DTCWT backend ${JSON.stringify(kind satisfies never)}`);
  }
}
