/**
 * Picks the DTCWT backend for this process. Watermark code asks for one here and only sees the
 * DtcwtBackend interface; `drm ingest` prints `backend.name` so a run says what it ran on.
 *
 * The CUDA backend is imported dynamically: CPU-only runs need not load koffi or the driver.
 */
import type { DtcwtBackend } from './backend.js';
import { type CpuPoolOptions, createCpuPoolBackend } from './cpu-pool.js';

export type { DtcwtBackend, FilterNames, Frame, Transform } from './backend.js';
export { createCpuDirectBackend } from './cpu-direct.js';
export { CpuPoolBackend, type CpuPoolOptions, createCpuPoolBackend } from './cpu-pool.js';

/**
 * 'cpu': the worker pool. 'cuda': the GPU through the CUDA driver (an error where there is none).
 * 'auto': CUDA when the driver loads and a device is present, else the pool.
 */
export type DtcwtBackendKind = 'cpu' | 'cuda' | 'auto';

export const BACKEND_KINDS: readonly DtcwtBackendKind[] = ['auto', 'cpu', 'cuda'];

export interface DtcwtBackendOptions extends CpuPoolOptions {
  /** told when the CUDA backend turns to the CPU after a driver error */
  onWarning?: (message: string) => void;
}

/** What `auto` found: the GPU it will use, or why it will not use one. */
export type CudaProbe = { ok: true; device: string } | { ok: false; reason: string };

async function openCuda(options: DtcwtBackendOptions) {
  const { CudaBackend } = await import('./cuda/backend.js');
  return CudaBackend.open(options);
}

/** Opens the GPU once to say what it is, or why CUDA is not used (for `drm doctor` and the worker). */
export async function probeCuda(): Promise<CudaProbe> {
  try {
    const backend = await openCuda({});
    const device = backend.device;
    await backend.close();
    return { ok: true, device };
  } catch (e) {
    return { ok: false, reason: cudaUnavailable(e) };
  }
}

/** The loader's or the driver's reason, in words an operator can act on. */
function cudaUnavailable(e: unknown): string {
  const message = e instanceof Error ? e.message : String(e);
  if (/UNSUPPORTED_PTX_VERSION|\(222\)/.test(message))
    return `the NVIDIA driver is older than the kernels need (the 580 series, CUDA 13, or newer): ${message}`;
  if (/libcuda|cannot open shared object|Failed to load shared library/i.test(message))
    return 'no NVIDIA driver (libcuda.so.1 not found)';
  return message;
}

export async function createDtcwtBackend(
  kind: DtcwtBackendKind = 'auto',
  options: DtcwtBackendOptions = {},
): Promise<DtcwtBackend> {
  switch (kind) {
    case 'cpu':
      return createCpuPoolBackend(options);
    case 'cuda':
      try {
        return await openCuda(options);
      } catch (e) {
        throw new Error(`--backend cuda: CUDA is not available here: ${cudaUnavailable(e)}`);
      }
    case 'auto':
      return openCuda(options).catch((e) =>
        createCpuPoolBackend({ ...options, note: `CUDA not used: ${cudaUnavailable(e)}` }),
      );
    default:
      throw new RangeError(`unknown DTCWT backend ${JSON.stringify(kind satisfies never)}`);
  }
}

/** The kind asked for: a command's --backend, else DRM_BACKEND, else auto; anything else is refused. */
export function backendKind(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): DtcwtBackendKind {
  const kind = flag ?? env.DRM_BACKEND ?? 'auto';
  if (!(BACKEND_KINDS as readonly string[]).includes(kind))
    throw new RangeError(`unknown DTCWT backend ${JSON.stringify(kind)} (DRM_BACKEND): use auto, cpu or cuda`);
  return kind as DtcwtBackendKind;
}
