/**
 * The CPU DTCWT backend: a pool of worker threads, one transform per job, so that a batch of
 * frames keeps every core busy. Frames and coefficients move between threads by transferring
 * their ArrayBuffers, never by copying them (see ownedArray for the one exception: views).
 *
 * Workers start lazily, on the first jobs, so creating a backend that is never used costs nothing,
 * and idle workers are unref'd so a forgotten close() cannot keep the process alive; a busy worker
 * holds a ref because someone is awaiting its result.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import {
  addTransfer,
  type DtcwtBackend,
  type FilterNames,
  type Frame,
  ownedArray,
  type Transform,
  transferableTransform,
} from './backend.js';
import type { ModulateJob, ModulateResult } from './modulate-job.js';
import type { PoolError, PoolMessage, PoolRequest, PoolResponse } from './cpu-pool-worker.js';
import { addMarkTimes, type MarkPartTimes, noMarkTime } from './thread-cpu.js';

export interface CpuPoolOptions {
  /** Worker threads; defaults to os.availableParallelism(), at least 1. */
  workers?: number;
  /** why the pool and not the GPU (DtcwtBackend.note) */
  note?: string;
}

type RequestBody = PoolRequest extends infer R ? (R extends PoolRequest ? Omit<R, 'id'> : never) : never;

interface Job {
  id: number;
  body: RequestBody;
  transfer: ArrayBuffer[];
  resolve: (r: PoolResponse) => void;
  reject: (e: Error) => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  /** Set by the worker's `ready` message: a worker that dies before that cannot start at all. */
  started: boolean;
}

const ENTRY = new URL('./worker-entry.mjs', import.meta.url);
// compiled (dist/), the worker is JavaScript beside this module; from the sources, TypeScript
const WORKER_MODULE = new URL(`./cpu-pool-worker.${import.meta.url.endsWith('.js') ? 'js' : 'ts'}`, import.meta.url)
  .href;

/**
 * Workers inherit the parent's node flags (a loader, --conditions) except --input-type: it only
 * applies to -e / stdin code, and Node refuses to start a file-based worker with it.
 */
const WORKER_EXEC_ARGV = process.execArgv.filter(
  (a, i, all) => !a.startsWith('--input-type') && !(i > 0 && all[i - 1] === '--input-type'),
);

const ERROR_TYPES: Record<string, new (message: string) => Error> = { RangeError, TypeError };

function toError(e: PoolError): Error {
  const err = new (ERROR_TYPES[e.name] ?? Error)(e.message);
  err.name = e.name;
  // Keep the worker's stack: it says where in the transform the job failed.
  if (e.stack) err.stack = e.stack;
  return err;
}

export class CpuPoolBackend implements DtcwtBackend {
  readonly name: string;
  readonly note?: string;
  readonly size: number;
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;
  /** A worker that could not start (tsx missing, syntax error): every later job fails with this. */
  private broken?: Error;
  /** the workers' CPU seconds in the parts of every modulate job so far (Linux; zeros elsewhere) */
  private readonly markSpent = noMarkTime();

  constructor(options: CpuPoolOptions = {}) {
    const size = options.workers ?? availableParallelism();
    if (!Number.isInteger(size) || size < 1) throw new RangeError(`cpu pool: invalid worker count ${size}`);
    this.size = size;
    this.name = `cpu (${size} worker${size === 1 ? '' : 's'})`;
    if (options.note) this.note = options.note;
  }

  /** Threads currently alive: 0 before the first job and after close(). */
  get workerCount(): number {
    return this.slots.length;
  }

  async forward(
    image: Float32Array,
    height: number,
    width: number,
    levels: number,
    filters?: FilterNames,
    firstHighpass?: number,
  ): Promise<Transform> {
    const owned = ownedArray(image);
    const transfer: ArrayBuffer[] = [];
    addTransfer(transfer, owned);
    const r = await this.submit(
      { op: 'forward', image: owned, height, width, levels, filters, firstHighpass },
      transfer,
    );
    if (!r.ok || r.op !== 'forward') throw new Error('cpu pool: unexpected reply to forward');
    return r.transform;
  }

  async inverse(t: Transform, filters?: FilterNames): Promise<Float32Array> {
    const { transform, transfer } = transferableTransform(t);
    const r = await this.submit({ op: 'inverse', transform, filters }, transfer);
    if (!r.ok || r.op !== 'inverse') throw new Error('cpu pool: unexpected reply to inverse');
    return r.image;
  }

  async modulate(job: ModulateJob): Promise<ModulateResult> {
    // Frames are transferred there and back, or written in place where they are shared memory
    // (a pool that reuses them); the gains are shared memory when the caller made them so (one
    // segment's gains serve hundreds of frames), else copied (they are small).
    const frame = ownedArray(job.frame);
    const next = job.next?.map(ownedArray);
    const minusInto = job.minusInto?.map(ownedArray);
    const transfer = [frame, ...(next ?? []), ...(minusInto ?? [])].flatMap((f) =>
      f.buffer instanceof ArrayBuffer ? [f.buffer] : [],
    );
    const r = await this.submit(
      { op: 'modulate', ...job, frame, ...(next ? { next } : {}), ...(minusInto ? { minusInto } : {}) },
      transfer,
    );
    if (!r.ok || r.op !== 'modulate') throw new Error('cpu pool: unexpected reply to modulate');
    if (r.times) addMarkTimes(this.markSpent, r.times);
    return {
      ...(r.plus ? { plus: r.plus } : {}),
      ...(r.minus ? { minus: r.minus } : {}),
      ...(r.next ? { next: r.next } : {}),
    };
  }

  markTimes(): MarkPartTimes {
    return { ...this.markSpent };
  }

  forwardMany(
    frames: readonly Frame[],
    levels: number,
    filters?: FilterNames,
    firstHighpass?: number,
  ): Promise<Transform[]> {
    return Promise.all(frames.map((f) => this.forward(f.image, f.height, f.width, levels, filters, firstHighpass)));
  }

  inverseMany(transforms: readonly Transform[], filters?: FilterNames): Promise<Float32Array[]> {
    return Promise.all(transforms.map((t) => this.inverse(t, filters)));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new Error('DTCWT backend is closed');
    for (const job of this.queue.splice(0)) job.reject(error);
    const slots = this.slots.splice(0);
    for (const slot of slots) slot.job?.reject(error);
    await Promise.all(slots.map((s) => s.worker.terminate()));
  }

  private submit(body: RequestBody, transfer: ArrayBuffer[]): Promise<PoolResponse> {
    return new Promise<PoolResponse>((resolve, reject) => {
      if (this.closed) return reject(new Error('DTCWT backend is closed'));
      if (this.broken) return reject(this.broken);
      this.queue.push({ id: this.nextId++, body, transfer, resolve, reject });
      this.dispatch();
    });
  }

  /** Hands queued jobs to idle workers, starting new workers while below the pool size. */
  private dispatch(): void {
    while (this.queue.length > 0) {
      let slot = this.slots.find((s) => !s.job);
      if (!slot && this.slots.length < this.size) slot = this.spawn();
      if (!slot) return;
      const job = this.queue.shift() as Job;
      slot.job = job;
      slot.worker.ref();
      slot.worker.postMessage({ id: job.id, ...job.body }, job.transfer);
    }
  }

  private spawn(): Slot {
    const worker = new Worker(ENTRY, { workerData: { module: WORKER_MODULE }, execArgv: WORKER_EXEC_ARGV });
    const slot: Slot = { worker, started: false };
    worker.unref();
    worker.on('message', (r: PoolMessage) => {
      if ('ready' in r) {
        slot.started = true;
        return;
      }
      const job = slot.job;
      if (!job || job.id !== r.id) return;
      slot.job = undefined;
      worker.unref();
      if (r.ok) job.resolve(r);
      else job.reject(toError(r.error));
      this.dispatch();
    });
    // An uncaught error or exit kills the thread: fail its job, then replace it (see 'exit').
    worker.on('error', (e) => this.retire(slot, e));
    worker.on('exit', (code) => this.retire(slot, new Error(`cpu pool worker exited with code ${code}`)));
    this.slots.push(slot);
    return slot;
  }

  private retire(slot: Slot, error: Error): void {
    const i = this.slots.indexOf(slot);
    if (i < 0) return; // already retired ('error' is followed by 'exit'), or closed
    this.slots.splice(i, 1);
    slot.job?.reject(error);
    slot.job = undefined;
    if (!slot.started) {
      // It never loaded, so a replacement would fail the same way: fail fast instead of looping.
      this.broken = error;
      for (const job of this.queue.splice(0)) job.reject(error);
      return;
    }
    this.dispatch();
  }
}

export function createCpuPoolBackend(options?: CpuPoolOptions): CpuPoolBackend {
  return new CpuPoolBackend(options);
}
