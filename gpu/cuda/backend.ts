/**
 * The CUDA backend of the one DtcwtBackend interface. The video mark's jobs are batched per geometry
 * (mark-lane.ts); forward and inverse transforms run through transform-runner.ts.
 *
 * A driver error (out of memory, a lost device, a failed launch) does not fail the work: the backend
 * warns once (the log, and its name, which ingest records with the job), frees what it holds on the
 * device, and runs that work and everything after it on the CPU pool. Frames are written only after
 * their batch is done on the device, so the CPU redoes a failed batch from untouched input.
 */
import { availableParallelism } from 'node:os';
import { checkForwardInput } from '../dtcwt/cpu.js';
import { type DtcwtBackend, type FilterNames, type Frame, resolveFilters, type Transform } from '../backend.js';
import { createCpuPoolBackend, type CpuPoolOptions } from '../cpu-pool.js';
import { checkJob, modulatedCount } from '../modulate.js';
import type { ModulateJob, ModulateResult } from '../modulate-job.js';
import { CudaContext, type OpenOptions } from './device.js';
import { CudaError } from './driver.js';
import type { MarkGeometry } from './mark-program.js';
import { MarkLane, type PendingJob } from './mark-lane.js';
import { PinnedFrames } from './pinned-frames.js';
import { TransformRunner } from './transform-runner.js';

export interface CudaBackendOptions extends OpenOptions, CpuPoolOptions {
  /** told once when the backend turns to the CPU after a driver error */
  onWarning?: (message: string) => void;
  /** frames per batch of the mark (default: what 256 MB of staging holds, at most 32) */
  batchFrames?: number;
  /** batches in flight per geometry (default 3) */
  slots?: number;
}

const STAGING_BYTES = 256 * 2 ** 20;

/** modulate.ts's checks, and the gains' count, which the CPU finds only once it has transformed. */
function checkBatchable(job: ModulateJob): void {
  checkJob(job);
  const count = modulatedCount(job.width, job.height, job.scale, job.levels, job.modulated);
  if (job.gains.length !== count) throw new RangeError(`modulate: ${job.gains.length} gains for ${count} coefficients`);
}

export class CudaBackend implements DtcwtBackend {
  private readonly lanes = new Map<string, MarkLane>();
  private readonly transforms: TransformRunner;
  readonly pinning: PinnedFrames;
  private cpu?: DtcwtBackend;
  private failure?: string;
  private closed = false;
  readonly device: string;

  /** how batches are awaited: on a koffi thread, or by polling the stream between turns of the loop */
  get waits(): 'off-thread' | 'polling' {
    return this.cuda.driver.waitsOffThread ? 'off-thread' : 'polling';
  }

  private constructor(
    private readonly cuda: CudaContext,
    private readonly options: CudaBackendOptions,
  ) {
    this.device = cuda.describe();
    this.transforms = new TransformRunner(cuda);
    this.pinning = new PinnedFrames(cuda.driver);
  }

  static async open(options: CudaBackendOptions = {}): Promise<CudaBackend> {
    return new CudaBackend(await CudaContext.open(options), options);
  }

  get name(): string {
    if (this.failure) return `${this.fallback().name} after CUDA failed on ${this.device}: ${this.failure}`;
    return `cuda (${this.device})`;
  }

  private fallback(): DtcwtBackend {
    this.cpu ??= createCpuPoolBackend({ workers: this.options.workers ?? availableParallelism() });
    return this.cpu;
  }

  /** The first driver error: warn, free the device's memory, and send all work to the CPU from now on. */
  private turnToCpu(error: unknown): void {
    if (this.failure) return;
    this.failure = error instanceof Error ? error.message : String(error);
    this.options.onWarning?.(`CUDA backend failed (${this.failure}); finishing on the CPU`);
    const lanes = [...this.lanes.values()];
    this.lanes.clear();
    void Promise.allSettled([
      ...lanes.map((l) => l.close().then((left) => this.runOnCpu(left))),
      this.transforms.close(),
    ]).then(() => {
      this.pinning.releaseAll();
      this.cuda.close();
    });
  }

  private runOnCpu(jobs: readonly PendingJob[]): void {
    for (const p of jobs) this.fallback().modulate(p.job).then(p.resolve, p.reject);
  }

  /** Runs on the GPU, and on the CPU instead when the driver fails (other errors are the caller's). */
  private async guarded<R>(gpu: () => Promise<R>, cpu: (b: DtcwtBackend) => Promise<R>): Promise<R> {
    if (this.closed) throw new Error('DTCWT backend is closed');
    if (this.failure) return cpu(this.fallback());
    try {
      return await gpu();
    } catch (e) {
      if (!(e instanceof CudaError)) throw e;
      this.turnToCpu(e);
      return cpu(this.fallback());
    }
  }

  modulate(job: ModulateJob): Promise<ModulateResult> {
    if (this.closed) return Promise.reject(new Error('DTCWT backend is closed'));
    try {
      checkBatchable(job);
    } catch (e) {
      return Promise.reject(e);
    }
    if (this.failure) return this.fallback().modulate(job);
    return new Promise<ModulateResult>((resolve, reject) => {
      const pending = { job, resolve, reject };
      try {
        const lane = this.lane(job);
        if (lane.fits(job)) return lane.submit(pending);
      } catch (e) {
        if (!(e instanceof CudaError)) return reject(e);
        this.turnToCpu(e);
      }
      this.runOnCpu([pending]);
    });
  }

  /** Every slot's batch full, so the device never waits for the next batch to be gathered. */
  framesInFlight(width: number, height: number): number {
    return this.batchFrames(width, height) * (this.options.slots ?? 3);
  }

  private batchFrames(width: number, height: number): number {
    return this.options.batchFrames ?? Math.max(1, Math.min(32, Math.floor(STAGING_BYTES / (3 * width * height))));
  }

  private lane(job: ModulateJob): MarkLane {
    const geometry: MarkGeometry = {
      width: job.width,
      height: job.height,
      scale: job.scale,
      levels: job.levels,
      modulated: [...job.modulated],
      ...(job.rms ? { rms: job.rms } : {}),
    };
    const key = JSON.stringify(geometry);
    let lane = this.lanes.get(key);
    if (!lane) {
      const capacity = this.batchFrames(job.width, job.height);
      lane = new MarkLane(this.cuda, geometry, capacity, this.options.slots ?? 3, this.pinning, (error, jobs) => {
        this.turnToCpu(error);
        this.runOnCpu(jobs);
      });
      this.lanes.set(key, lane);
    }
    return lane;
  }

  forward(
    image: Float32Array,
    height: number,
    width: number,
    levels: number,
    filters?: FilterNames,
    firstHighpass = 1,
  ): Promise<Transform> {
    return this.forwardMany([{ image, height, width }], levels, filters, firstHighpass).then((t) => t[0] as Transform);
  }

  async forwardMany(
    frames: readonly Frame[],
    levels: number,
    filters?: FilterNames,
    firstHighpass = 1,
  ): Promise<Transform[]> {
    const bank = resolveFilters(filters);
    for (const f of frames) checkForwardInput(f.image, f.height, f.width, levels, firstHighpass);
    if (frames.length === 0) return [];
    const key = JSON.stringify(filters ?? {});
    const sized = (f: Frame) => `${f.height}x${f.width}`;
    if (frames.some((f) => sized(f) !== sized(frames[0] as Frame)))
      return Promise.all(frames.map((f) => this.forward(f.image, f.height, f.width, levels, filters, firstHighpass)));
    return this.guarded(
      () => this.transforms.forward(frames, levels, bank, firstHighpass, key),
      (cpu) => cpu.forwardMany(frames, levels, filters, firstHighpass),
    );
  }

  inverse(transform: Transform, filters?: FilterNames): Promise<Float32Array> {
    return this.inverseMany([transform], filters).then((r) => r[0] as Float32Array);
  }

  async inverseMany(transforms: readonly Transform[], filters?: FilterNames): Promise<Float32Array[]> {
    const bank = resolveFilters(filters);
    if (transforms.length === 0) return [];
    const shape = (t: Transform) => this.transforms.inverseKey(t);
    if (transforms.some((t) => shape(t) !== shape(transforms[0] as Transform)))
      return Promise.all(transforms.map((t) => this.inverse(t, filters)));
    return this.guarded(
      () => this.transforms.inverse(transforms, bank, JSON.stringify(filters ?? {})),
      (cpu) => cpu.inverseMany(transforms, filters),
    );
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const lanes = [...this.lanes.values()];
    this.lanes.clear();
    const closedError = () => new Error('DTCWT backend is closed');
    for (const lane of lanes) for (const left of await lane.close()) left.reject(closedError());
    await this.transforms.close().catch(() => undefined);
    this.pinning.releaseAll();
    this.cuda.close();
    await this.cpu?.close();
  }
}
