/**
 * The CUDA driver API (libcuda.so.1, which every NVIDIA driver installs) from Node through koffi, so
 * that users need the driver and not the CUDA toolkit: the kernels come as PTX that the driver
 * compiles for the card in hand. Only the calls the backend needs are bound.
 *
 * Every handle and address is a plain number (x86-64 and arm64 addresses fit in 53 bits), passed as
 * a 64-bit integer: no koffi pointer objects on the hot path. The same bindings load the CPU shim
 * (shim/cuda-shim.cpp) in tests, which implements these calls over the kernels compiled as C++.
 */
type Koffi = typeof import('koffi');
// biome-ignore lint/suspicious/noExplicitAny: koffi's bound functions are untyped
type Fn = ((...args: any[]) => number) & { async: (...args: any[]) => void };

/** CUresult codes that the backend tells apart. */
export const CUDA_NOT_READY = 600;
export const CUDA_INVALID_CONTEXT = 201;
export const CUDA_OUT_OF_MEMORY = 2;
export const CUDA_UNSUPPORTED_PTX_VERSION = 222;

/**
 * Runs every step, each even when an earlier one threw: freeing after a failure, where a lost
 * device refuses some frees and releasing the context frees what is left.
 */
export function attemptAll(steps: readonly (() => unknown)[]): void {
  for (const step of steps) {
    try {
      step();
    } catch {
      // the next step still runs
    }
  }
}

/** A driver call that failed: its name, the driver's code and the code's name. */
export class CudaError extends Error {
  constructor(
    readonly call: string,
    readonly code: number,
    codeName: string,
  ) {
    super(`CUDA ${call} failed: ${codeName} (${code})`);
    this.name = 'CudaError';
  }
}

export interface CudaDevice {
  name: string;
  /** e.g. "13.0" */
  driverVersion: string;
  /** e.g. "9.0" for an H100 or H200 */
  computeCapability: string;
  memoryBytes: number;
}

const PROTOTYPES = {
  cuInit: 'int cuInit(unsigned int flags)',
  cuDriverGetVersion: 'int cuDriverGetVersion(_Out_ int *version)',
  cuDeviceGetCount: 'int cuDeviceGetCount(_Out_ int *count)',
  cuDeviceGet: 'int cuDeviceGet(_Out_ int *device, int ordinal)',
  cuDeviceGetName: 'int cuDeviceGetName(_Out_ uint8_t *name, int length, int device)',
  cuDeviceGetAttribute: 'int cuDeviceGetAttribute(_Out_ int *value, int attribute, int device)',
  cuDeviceTotalMem_v2: 'int cuDeviceTotalMem_v2(_Out_ uint64_t *bytes, int device)',
  cuDevicePrimaryCtxSetFlags_v2: 'int cuDevicePrimaryCtxSetFlags_v2(int device, unsigned int flags)',
  cuDevicePrimaryCtxRetain: 'int cuDevicePrimaryCtxRetain(_Out_ uint64_t *context, int device)',
  cuDevicePrimaryCtxRelease_v2: 'int cuDevicePrimaryCtxRelease_v2(int device)',
  cuCtxSetCurrent: 'int cuCtxSetCurrent(uint64_t context)',
  cuModuleLoadData: 'int cuModuleLoadData(_Out_ uint64_t *module, const char *image)',
  cuModuleUnload: 'int cuModuleUnload(uint64_t module)',
  cuModuleGetFunction: 'int cuModuleGetFunction(_Out_ uint64_t *function, uint64_t module, const char *name)',
  cuMemAlloc_v2: 'int cuMemAlloc_v2(_Out_ uint64_t *address, uint64_t bytes)',
  cuMemFree_v2: 'int cuMemFree_v2(uint64_t address)',
  cuMemAllocHost_v2: 'int cuMemAllocHost_v2(_Out_ void **address, uint64_t bytes)',
  cuMemFreeHost: 'int cuMemFreeHost(void *address)',
  cuMemHostRegister_v2: 'int cuMemHostRegister_v2(uint64_t address, uint64_t bytes, unsigned int flags)',
  cuMemHostUnregister: 'int cuMemHostUnregister(uint64_t address)',
  cuMemcpyHtoDAsync_v2: 'int cuMemcpyHtoDAsync_v2(uint64_t to, uint64_t from, uint64_t bytes, uint64_t stream)',
  cuMemcpyDtoHAsync_v2: 'int cuMemcpyDtoHAsync_v2(uint64_t to, uint64_t from, uint64_t bytes, uint64_t stream)',
  cuMemsetD8Async: 'int cuMemsetD8Async(uint64_t to, uint8_t value, uint64_t bytes, uint64_t stream)',
  cuStreamCreate: 'int cuStreamCreate(_Out_ uint64_t *stream, unsigned int flags)',
  cuStreamDestroy_v2: 'int cuStreamDestroy_v2(uint64_t stream)',
  cuStreamSynchronize: 'int cuStreamSynchronize(uint64_t stream)',
  cuStreamQuery: 'int cuStreamQuery(uint64_t stream)',
  cuLaunchKernel:
    'int cuLaunchKernel(uint64_t f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, ' +
    'unsigned int by, unsigned int bz, unsigned int shared, uint64_t stream, uint64_t params, uint64_t extra)',
  cuGetErrorName: 'int cuGetErrorName(int code, _Out_ const char **name)',
} as const;

type Calls = { [K in keyof typeof PROTOTYPES]: Fn };

const CC_MAJOR = 75;
const CU_CTX_SCHED_BLOCKING_SYNC = 4;
const CC_MINOR = 76;

/** Memory the host and the device both reach at full speed (page-locked), seen from JS as bytes. */
export interface PinnedMemory {
  address: number;
  bytes: Uint8Array;
}

export class CudaDriver {
  private context = 0;
  /** whether cuStreamSynchronize may run on one of koffi's threads (checked once, at open) */
  private asyncWait = false;
  /** the off-thread waits, one after another (see wait) */
  private waitsInTurn: Promise<unknown> = Promise.resolve();
  private readonly pinned = new Map<number, unknown>();

  private constructor(
    readonly koffi: Koffi,
    private readonly calls: Calls,
    readonly library: string,
  ) {}

  /** Loads the driver library and binds the calls; throws with the loader's reason when it cannot. */
  static async load(library = 'libcuda.so.1'): Promise<CudaDriver> {
    const loaded = (await import('koffi')) as unknown as { default?: Koffi };
    const koffi = loaded.default ?? (loaded as unknown as Koffi);
    const lib = koffi.load(library);
    const calls = Object.fromEntries(
      Object.entries(PROTOTYPES).map(([name, prototype]) => [name, lib.func(prototype)]),
    ) as unknown as Calls;
    return new CudaDriver(koffi, calls, library);
  }

  private check(call: keyof Calls, code: number): void {
    if (code === 0) return;
    const name: [string | null] = [null];
    const named = this.calls.cuGetErrorName(code, name) === 0 && name[0];
    throw new CudaError(call, code, named || `CUresult ${code}`);
  }

  /** One call whose single out parameter comes back as a number. */
  private out(call: keyof Calls, ...args: unknown[]): number {
    const value: [number | bigint | null] = [0];
    this.check(call, this.calls[call](value, ...args));
    return Number(value[0]);
  }

  /** Initialises the driver, takes device 0's primary context and says what the device is. */
  open(): CudaDevice {
    this.check('cuInit', this.calls.cuInit(0));
    if (this.out('cuDeviceGetCount') < 1) throw new CudaError('cuDeviceGetCount', 100, 'CUDA_ERROR_NO_DEVICE');
    const device = this.out('cuDeviceGet', 0);
    // A waiting thread sleeps instead of spinning a core that ffmpeg and the CPU pool need. Refused
    // where another library made the context first: then its flags stay, which only costs CPU.
    this.calls.cuDevicePrimaryCtxSetFlags_v2(device, CU_CTX_SCHED_BLOCKING_SYNC);
    this.context = this.out('cuDevicePrimaryCtxRetain', device);
    this.check('cuCtxSetCurrent', this.calls.cuCtxSetCurrent(this.context));
    const name = Buffer.alloc(256);
    this.check('cuDeviceGetName', this.calls.cuDeviceGetName(name, name.length, device));
    const version = this.out('cuDriverGetVersion');
    const major = this.out('cuDeviceGetAttribute', CC_MAJOR, device);
    const minor = this.out('cuDeviceGetAttribute', CC_MINOR, device);
    return {
      name: name.subarray(0, Math.max(0, name.indexOf(0))).toString('utf8'),
      driverVersion: `${Math.floor(version / 1000)}.${(version % 1000) / 10}`,
      computeCapability: `${major}.${minor}`,
      memoryBytes: this.out('cuDeviceTotalMem_v2', device),
    };
  }

  /** Releases the primary context taken by open (the driver frees what the process left in it). */
  close(): void {
    if (!this.context) return;
    this.context = 0;
    this.calls.cuDevicePrimaryCtxRelease_v2(0);
  }

  loadModule(ptx: string): number {
    return this.out('cuModuleLoadData', ptx);
  }

  unloadModule(module: number): void {
    this.check('cuModuleUnload', this.calls.cuModuleUnload(module));
  }

  kernel(module: number, name: string): number {
    return this.out('cuModuleGetFunction', module, name);
  }

  alloc(bytes: number): number {
    return this.out('cuMemAlloc_v2', bytes);
  }

  free(address: number): void {
    this.check('cuMemFree_v2', this.calls.cuMemFree_v2(address));
  }

  allocPinned(bytes: number): PinnedMemory {
    const pointer: [unknown] = [null];
    this.check('cuMemAllocHost_v2', this.calls.cuMemAllocHost_v2(pointer, bytes));
    const address = Number(this.koffi.address(pointer[0]));
    this.pinned.set(address, pointer[0]);
    return { address, bytes: new Uint8Array(this.koffi.view(pointer[0], bytes)) };
  }

  freePinned(memory: PinnedMemory): void {
    const pointer = this.pinned.get(memory.address);
    if (pointer === undefined) return;
    this.pinned.delete(memory.address);
    this.check('cuMemFreeHost', this.calls.cuMemFreeHost(pointer));
  }

  /** Where memory that JS owns (a SharedArrayBuffer's, which never moves) starts. */
  addressOf(memory: Uint8Array): number {
    return Number(this.koffi.address(memory));
  }

  /**
   * Page-locks a range of memory that JS owns, so that copies to and from the device run on its
   * copy engines without staging. The memory must outlive the registration: unregister it first.
   */
  register(address: number, bytes: number): void {
    this.check('cuMemHostRegister_v2', this.calls.cuMemHostRegister_v2(address, bytes, 0));
  }

  unregister(address: number): void {
    this.check('cuMemHostUnregister', this.calls.cuMemHostUnregister(address));
  }

  upload(to: number, from: number, bytes: number, stream: number): void {
    this.check('cuMemcpyHtoDAsync_v2', this.calls.cuMemcpyHtoDAsync_v2(to, from, bytes, stream));
  }

  download(to: number, from: number, bytes: number, stream: number): void {
    this.check('cuMemcpyDtoHAsync_v2', this.calls.cuMemcpyDtoHAsync_v2(to, from, bytes, stream));
  }

  zero(to: number, bytes: number, stream: number): void {
    this.check('cuMemsetD8Async', this.calls.cuMemsetD8Async(to, 0, bytes, stream));
  }

  createStream(): number {
    return this.out('cuStreamCreate', 1); // CU_STREAM_NON_BLOCKING: no sync with the null stream
  }

  destroyStream(stream: number): void {
    this.check('cuStreamDestroy_v2', this.calls.cuStreamDestroy_v2(stream));
  }

  launch(kernel: number, grid: readonly [number, number], block: number, params: number, stream: number): void {
    const code = this.calls.cuLaunchKernel(kernel, grid[0], grid[1], 1, block, 1, 1, 0, stream, params, 0);
    this.check('cuLaunchKernel', code);
  }

  /** Blocks until the stream's work is done: only for one-off setup, never per batch. */
  synchronize(stream: number): void {
    this.check('cuStreamSynchronize', this.calls.cuStreamSynchronize(stream));
  }

  /** whether batches are awaited on one of koffi's threads (else by asking the stream between turns of the loop) */
  get waitsOffThread(): boolean {
    return this.asyncWait;
  }

  /**
   * Resolves when the stream's work is done, without holding the event loop: on one of koffi's
   * threads where the driver allows it (checked once, at open), else by asking the stream between
   * turns of the loop.
   *
   * The off-thread waits take turns. Each holds one of libuv's threads for a whole batch, and those
   * threads (4 unless UV_THREADPOOL_SIZE says otherwise) also read files for the server beside
   * it; batches end in the order they were queued, so one waiter at a time loses nothing.
   */
  async wait(stream: number): Promise<void> {
    if (this.asyncWait) {
      const code = await this.inTurn(() => this.synchronizeOffThread(stream));
      if (code !== CUDA_INVALID_CONTEXT) return this.check('cuStreamSynchronize', code);
      // The probe's stream waited off-thread but this one has no context there: poll from now on.
      this.asyncWait = false;
    }
    for (let turns = 0; ; turns++) {
      const code = this.calls.cuStreamQuery(stream);
      if (code !== CUDA_NOT_READY) return this.check('cuStreamQuery', code);
      await new Promise((resolve) => (turns < 64 ? setImmediate(resolve) : setTimeout(resolve, 1)));
    }
  }

  /** Tries the off-thread wait once; keeps polling if the driver refuses it there. */
  async probeAsyncWait(stream: number): Promise<boolean> {
    this.asyncWait = (await this.synchronizeOffThread(stream)) === 0;
    return this.asyncWait;
  }

  private inTurn<T>(wait: () => Promise<T>): Promise<T> {
    const turn = this.waitsInTurn.then(wait);
    this.waitsInTurn = turn.catch(() => undefined);
    return turn;
  }

  private synchronizeOffThread(stream: number): Promise<number> {
    return new Promise((resolve, reject) =>
      this.calls.cuStreamSynchronize.async(stream, (error: unknown, code: number) =>
        error ? reject(error) : resolve(code),
      ),
    );
  }
}
