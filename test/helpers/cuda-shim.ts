import koffi from 'koffi';
import { afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { createCpuDirectBackend } from '../../gpu/cpu-direct.js';
import { buildCudaShim } from '../../gpu/cuda/shim/build.js';
import { type ModulateJob, modulatedCount, modulateFrame } from '../../gpu/modulate.js';

/**
 * The CPU shim that stands in for libcuda.so.1 (gpu/cuda/shim/), with its test controls: the same
 * kernel sources compiled as C++ behind the driver calls the backend makes.
 */
export interface CudaShim {
  library: string;
  /** the n-th launch from now fails when it is made */
  failLaunch(n: number): void;
  /** the n-th launch from now faults on the device: reported at the next wait, then every call fails */
  faultLaunch(n: number): void;
  memoryLimit(bytes: number): void;
  /** allocations and host registrations not yet freed */
  live(): number;
  refuseRegister(refuse: number): void;
  /** copies between host and device so far, by their host side: pageable, allocated pinned, registered */
  copies(): { pageable: number; staging: number; registered: number };
  /** launches accepted so far */
  launches(): number;
  /** each wait on a stream takes this long, so that a batch stays in flight */
  waitDelay(ms: number): void;
  /** host memory unregistered while a stream was being waited for */
  unregisteredMidWait(): number;
  /** with deferred streams: copies whose host source changed before they ran, memory released under queued work */
  races(): number;
  /** the most waits under way at once off the main thread (koffi's), since the last call */
  mostOffThreadWaits(): number;
  /** waits off the main thread fail with CUDA_ERROR_INVALID_CONTEXT */
  refuseOffThreadWait(refuse: number): void;
  /** the controls as a fresh test expects them */
  reset(): void;
}

export function loadCudaShim(options: { deferred?: boolean } = {}): CudaShim {
  const library = buildCudaShim(options);
  const lib = koffi.load(library);
  const failLaunch = lib.func('void drmShimFailLaunch(long n)');
  const faultLaunch = lib.func('void drmShimFaultLaunch(long n)');
  const memoryLimit = lib.func('void drmShimMemoryLimit(unsigned long long bytes)');
  const refuseRegister = lib.func('void drmShimRefuseRegister(int refuse)');
  const copiesOf = lib.func('long drmShimCopies(int kind)');
  const waitDelay = lib.func('void drmShimWaitDelay(int ms)');
  const refuseOffThreadWait = lib.func('void drmShimRefuseOffThreadWait(int refuse)');
  return {
    library,
    failLaunch,
    faultLaunch,
    memoryLimit,
    live: lib.func('int drmShimLive()'),
    refuseRegister,
    copies: () => ({ pageable: copiesOf(0), staging: copiesOf(1), registered: copiesOf(2) }),
    launches: lib.func('long drmShimLaunches()'),
    waitDelay,
    unregisteredMidWait: lib.func('long drmShimUnregisteredMidWait()'),
    races: lib.func('long drmShimRaces()'),
    mostOffThreadWaits: lib.func('int drmShimMostOffThreadWaits()'),
    refuseOffThreadWait,
    reset() {
      waitDelay(0);
      failLaunch(0);
      faultLaunch(0);
      memoryLimit(2 ** 62);
      refuseRegister(0);
      refuseOffThreadWait(0);
    },
  };
}

/**
 * The shim's two schedules, which every scenario of the CUDA backend runs on: streams that run their
 * work at once, and streams that run it only when waited for, as a GPU's do (gpu/cuda/shim/streams.h),
 * where host code that reads a result too early or reuses memory a queued copy still needs fails.
 */
export const SCHEDULES: [schedule: string, deferred: boolean][] = [
  ['streams that run their work at once', false],
  ['streams that run their work only when waited for', true],
];

/**
 * The shim of a schedule for a describe block's tests (handed to `use` before they run). After each
 * test: no race between the host and a stream, and the controls reset.
 */
export function shimFor(deferred: boolean, use: (shim: CudaShim) => void): void {
  let shim: CudaShim;
  let races = 0;
  beforeAll(() => {
    shim = loadCudaShim({ deferred });
    use(shim);
  });
  beforeEach(() => {
    races = shim.races();
  });
  afterEach(() => {
    expect(shim.races() - races, 'the host touched memory that queued stream work still used').toBe(0);
    shim.reset();
  });
}

export const W = 160;
export const H = 96;

/** A textured frame (yuv420p) whose content depends on `seed`; seeds far apart differ like a cut. */
export function frame(seed: number, into: Uint8Array = new Uint8Array((W * H * 3) / 2)): Uint8Array {
  into.fill(seed % 256);
  for (let i = 0; i < W * H; i++) {
    const x = i % W;
    const y = Math.floor(i / W);
    into[i] = Math.round(128 + 60 * Math.sin(x / 5 + seed) * Math.cos(y / 7) + ((i * 7919 + seed) % 13) - 6);
  }
  return into;
}

export function gainsFor(seed: number): Float32Array {
  const n = modulatedCount(W, H, 4, 3, [2, 3]);
  return Float32Array.from({ length: n }, (_, i) => (((i * 2654435761 + seed) >>> 7) % 2 ? 0.13 : -0.13));
}

/** A marking job over copies of the frames, as ingest asks for it (RMS hold included). */
export function job(frames: Uint8Array[], gains: Float32Array, want: ModulateJob['want'] = 'both'): ModulateJob {
  const [first, ...next] = frames.map((f) => f.slice());
  const rms = { min: 255 / 10 ** (58.5 / 20), max: 255 / 10 ** (52 / 20), maxBoost: 4 };
  return {
    frame: first as Uint8Array,
    next,
    width: W,
    height: H,
    scale: 4,
    levels: 3,
    modulated: [2, 3],
    gains,
    want,
    rms,
  };
}

/** A job's copy to mark on the CPU for comparison: the backend under test takes the original's frames. */
export function copyOf(request: ModulateJob): ModulateJob {
  return { ...request, frame: request.frame.slice(), next: request.next?.map((f) => f.slice()), minusInto: undefined };
}

function largestDifference(a: Uint8Array | undefined, b: Uint8Array | undefined): number {
  if (!a || !b || a.length !== b.length) return Number.POSITIVE_INFINITY;
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs((a[i] as number) - (b[i] as number)));
  return worst;
}

/** Every wanted variant within one grey level of what the single-thread CPU backend makes. */
export async function expectLikeCpu(actual: Promise<unknown>, request: ModulateJob): Promise<void> {
  const expected = await modulateFrame(createCpuDirectBackend(), request);
  const got = (await actual) as Awaited<ReturnType<typeof modulateFrame>>;
  const pairs = [[got, expected], ...(expected.next ?? []).map((e, i) => [got.next?.[i] ?? {}, e])];
  for (const [g, e] of pairs as [typeof got, typeof got][]) {
    if (e.plus) expect(largestDifference(g.plus, e.plus)).toBeLessThanOrEqual(1);
    if (e.minus) expect(largestDifference(g.minus, e.minus)).toBeLessThanOrEqual(1);
  }
}
