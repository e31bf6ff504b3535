/**
 * The opened GPU: the driver bindings, device 0's primary context, and the kernels loaded from the
 * committed PTX (ptx/*.ptx, made by `npm run build:ptx` from kernels/*.cu). The driver compiles the
 * PTX for the card in hand the first time a module loads.
 */
import fs from 'node:fs';
import { attemptAll, type CudaDevice, CudaDriver } from './driver.js';
import { KERNEL_MODULES, type KernelName } from './program.js';

/** The PTX of a kernel file: beside this module in the sources (ptx/), beside the chunk in dist/. */
export function ptxText(module: string): string {
  return fs.readFileSync(new URL(`./ptx/${module}.ptx`, import.meta.url), 'utf8');
}

export interface OpenOptions {
  /** the driver library: libcuda.so.1, or the CPU shim in tests (DRM_CUDA_LIBRARY) */
  library?: string;
}

/**
 * Whether a stream can be awaited on one of koffi's threads, asked of a stream with work queued, as a
 * batch's is: a driver may take the context from an idle stream more readily than from a busy one.
 */
async function probeWaits(driver: CudaDriver): Promise<void> {
  const stream = driver.createStream();
  const scratch = driver.alloc(256);
  try {
    driver.zero(scratch, 256, stream);
    await driver.probeAsyncWait(stream);
  } finally {
    driver.synchronize(stream);
    driver.free(scratch);
    driver.destroyStream(stream);
  }
}

export class CudaContext {
  private readonly modules: number[] = [];
  readonly kernels = new Map<KernelName, number>();
  private closed = false;

  private constructor(
    readonly driver: CudaDriver,
    readonly device: CudaDevice,
  ) {}

  /** Opens the driver and device 0 and loads every kernel; throws a CudaError or the loader's error. */
  static async open(options: OpenOptions = {}): Promise<CudaContext> {
    const driver = await CudaDriver.load(options.library ?? process.env.DRM_CUDA_LIBRARY ?? 'libcuda.so.1');
    let device: CudaDevice;
    try {
      device = driver.open();
    } catch (e) {
      driver.close(); // the primary context, when it was taken before the call that failed
      throw e;
    }
    const context = new CudaContext(driver, device);
    try {
      for (const [module, names] of Object.entries(KERNEL_MODULES)) {
        const handle = driver.loadModule(ptxText(module));
        context.modules.push(handle);
        for (const name of names) context.kernels.set(name, driver.kernel(handle, name));
      }
      await probeWaits(driver);
      return context;
    } catch (e) {
      context.close();
      throw e;
    }
  }

  /** "NVIDIA H200 (compute 9.0, driver 13.0)" */
  describe(): string {
    const d = this.device;
    return `${d.name} (compute ${d.computeCapability}, driver ${d.driverVersion})`;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    attemptAll(this.modules.splice(0).map((m) => () => this.driver.unloadModule(m)));
    this.driver.close();
  }
}
