/**
 * Video-mark jobs of one geometry, gathered into batches and run on the GPU. Several slots, each
 * with its own stream, device arena and page-locked staging, take batches in turn: while one slot's
 * batch is on the device, the main thread stages the next batch in another slot and collects a
 * finished one, so uploads, kernels and readbacks overlap with the CPU's copies and the GPU does
 * not wait for the host. Frames whose memory is pinned (pinned-frames.ts) skip staging: their luma
 * goes up, and their variant B comes down, straight from and into their own memory.
 *
 * A frame is only written once its batch is finished on the device: a failed batch leaves every
 * frame as it came, and its jobs are handed back whole (to run on the CPU).
 */
import type { ModulateJob, ModulateResult } from '../modulate-job.js';
import { Arena } from './arena.js';
import { framesOf, minusFrames, type StagedLumas, writtenVariants } from './batch-frames.js';
import type { CudaContext } from './device.js';
import { attemptAll, CUDA_OUT_OF_MEMORY, CudaError, type PinnedMemory } from './driver.js';
import { type MarkGeometry, type MarkProgram, markProgram } from './mark-program.js';
import type { PinnedFrames } from './pinned-frames.js';

export interface PendingJob {
  job: ModulateJob;
  resolve: (r: ModulateResult) => void;
  reject: (e: Error) => void;
}

interface Slot {
  stream: number;
  arena: Arena;
  input: PinnedMemory;
  output: PinnedMemory;
}

const align = (n: number) => Math.ceil(n / 256) * 256;
const pairsOf = (frames: number) => (frames * (frames - 1)) / 2;

export class MarkLane {
  readonly plan: MarkProgram;
  private readonly slots: Slot[] = [];
  private readonly idle: Slot[] = [];
  private readonly queue: PendingJob[] = [];
  private scheduled = false;
  private broken = false;
  /** batches on the device: close waits for them before it frees their memory */
  private readonly running = new Set<Promise<void>>();
  private readonly plane: number;
  private readonly at: { gains: number; table: number; input: number };

  constructor(
    private readonly cuda: CudaContext,
    readonly geometry: MarkGeometry,
    capacity: number,
    private slotCount: number,
    private readonly pinned: PinnedFrames,
    /** a batch the device failed: its jobs, untouched, and the error */
    private readonly onFailure: (error: unknown, jobs: PendingJob[]) => void,
  ) {
    this.plan = markProgram(geometry, capacity);
    this.plane = geometry.width * geometry.height;
    const gains = align(capacity * this.plane);
    const table = gains + align(capacity * this.plan.gainCount * 4);
    this.at = { gains, table, input: table + this.plan.table.length * 4 };
  }

  /** Whether a job fits a batch at all (runs longer than 8 frames take the CPU). */
  fits(job: ModulateJob): boolean {
    const n = framesOf(job).length;
    return n <= this.plan.capacity && pairsOf(n) <= this.plan.pairCapacity;
  }

  submit(pending: PendingJob): void {
    this.queue.push(pending);
    if (this.scheduled) return;
    this.scheduled = true;
    // Jobs submitted in the same turn go out together.
    setImmediate(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  private slot(): Slot | undefined {
    const ready = this.idle.pop();
    if (ready || this.slots.length >= this.slotCount) return ready;
    const { driver } = this.cuda;
    const stream = driver.createStream();
    const parts: { arena?: Arena; input?: PinnedMemory; output?: PinnedMemory } = {};
    try {
      parts.arena = new Arena(driver, this.plan.program, this.plan.capacity, this.cuda.kernels);
      parts.input = driver.allocPinned(this.at.input);
      parts.output = driver.allocPinned(2 * align(this.plan.capacity * this.plane));
      const slot = { stream, arena: parts.arena, input: parts.input, output: parts.output };
      this.slots.push(slot);
      return slot;
    } catch (e) {
      this.release({ stream, ...parts });
      throw e;
    }
  }

  /** Starts batches while there are jobs and free slots. */
  private pump(): void {
    while (this.queue.length > 0 && !this.broken) {
      let slot: Slot | undefined;
      try {
        slot = this.slot();
      } catch (e) {
        // Out of memory for one more slot: carry on with the slots there are.
        if (e instanceof CudaError && e.code === CUDA_OUT_OF_MEMORY && this.slots.length > 0) {
          this.slotCount = this.slots.length;
          return;
        }
        this.fail(e, this.queue.splice(0));
        return;
      }
      if (!slot) return;
      const batch = this.take();
      const s = slot;
      const running = this.runBatch(s, batch)
        .then(
          () => {
            this.idle.push(s);
            this.pump();
          },
          (e) => this.fail(e, batch),
        )
        // a failure handler that throws (a warning callback) must not leave the jobs waiting
        .catch((e: unknown) => {
          for (const p of batch) p.reject(e instanceof Error ? e : new Error(String(e)));
        });
      this.running.add(running);
      this.pinned.track(running);
      void running.finally(() => this.running.delete(running));
    }
  }

  private fail(error: unknown, jobs: PendingJob[]): void {
    this.broken = true;
    this.onFailure(error, [...jobs, ...this.queue.splice(0)]);
  }

  /** The next batch: whole jobs in order, up to the capacity in frames and in pairs. */
  private take(): PendingJob[] {
    const batch: PendingJob[] = [];
    let frames = 0;
    let pairs = 0;
    while (this.queue.length > 0) {
      const n = framesOf((this.queue[0] as PendingJob).job).length;
      if (batch.length > 0 && (frames + n > this.plan.capacity || pairs + pairsOf(n) > this.plan.pairCapacity)) break;
      batch.push(this.queue.shift() as PendingJob);
      frames += n;
      pairs += pairsOf(n);
    }
    return batch;
  }

  /**
   * Copies a batch into the slot's staging: the gain tables, the integer table, and the lumas of
   * frames that are not pinned (a pinned frame's luma goes to the device straight from its memory).
   */
  private stage(slot: Slot, batch: readonly PendingJob[]) {
    const { table: t, gainCount, capacity } = this.plan;
    const bytes = slot.input.bytes;
    const table = new Int32Array(bytes.buffer, bytes.byteOffset + this.at.table, t.length);
    const gains = new Float32Array(bytes.buffer, bytes.byteOffset + this.at.gains, capacity * gainCount);
    const tables = new Map<Float32Array, number>();
    const lumas: number[] = [];
    let frames = 0;
    let pairs = 0;
    batch.forEach(({ job }, j) => {
      let g = tables.get(job.gains);
      if (g === undefined) {
        g = tables.size;
        tables.set(job.gains, g);
        gains.set(job.gains, g * gainCount);
      }
      const run = framesOf(job);
      table.set([frames, run.length, pairs], t.jobs + 1 + 3 * j);
      run.forEach((frame, k) => {
        const f = frames + k;
        const pinned = this.pinned.addressOf(frame);
        if (pinned === undefined) bytes.set(frame.subarray(0, this.plane), f * this.plane);
        lumas.push(pinned ?? slot.input.address + f * this.plane);
        table[t.gainIndex + f] = g;
        for (let i = 0; i < k; i++) table.set([frames + i, f], t.pairs + 2 * (pairs + pairsOf(k) + i));
      });
      frames += run.length;
      pairs += pairsOf(run.length);
    });
    table[t.jobs] = batch.length;
    return { frames, pairs, tables: tables.size, lumas };
  }

  /**
   * A batch, and on any failure its stream synchronized before the failure is told: copies queued
   * before a call that threw may still be running, into frames the CPU is about to redo.
   */
  private async runBatch(slot: Slot, batch: PendingJob[]): Promise<void> {
    try {
      await this.runOnDevice(slot, batch);
    } catch (e) {
      attemptAll([() => this.cuda.driver.synchronize(slot.stream)]);
      throw e;
    }
  }

  private async runOnDevice(slot: Slot, batch: PendingJob[]): Promise<void> {
    const { driver } = this.cuda;
    const { buffers, gainCount } = this.plan;
    const shape = this.stage(slot, batch);
    const minus = minusFrames(batch);
    const { arena, stream, input, output } = slot;
    const half = align(this.plan.capacity * this.plane);
    const plane = (buffer: string, f: number) => arena.address(buffer) + f * this.plane;
    for (const [f, from] of shape.lumas.entries()) driver.upload(plane(buffers.luma, f), from, this.plane, stream);
    driver.upload(arena.address(buffers.gains), input.address + this.at.gains, shape.tables * gainCount * 4, stream);
    driver.upload(arena.address(buffers.table), input.address + this.at.table, this.plan.table.length * 4, stream);
    arena.run({ frames: shape.frames, pairs: shape.pairs, jobs: batch.length }, stream);
    // Only the variants a frame's job wants come back (a viewer's copy wants one a segment). A is
    // written into the input frame itself, so it waits in staging until the batch is known good.
    const wants = batch.flatMap(({ job }) => framesOf(job).map(() => job.want));
    if (wants.some((want) => want !== 'minus'))
      driver.download(output.address, arena.address(buffers.a), shape.frames * this.plane, stream);
    const direct = minus.map((m) => (m ? this.pinned.addressOf(m) : undefined));
    for (const [f, to] of direct.entries())
      if (wants[f] !== 'plus')
        driver.download(to ?? output.address + half + f * this.plane, plane(buffers.b, f), this.plane, stream);
    await driver.wait(stream);
    let f = 0;
    const staged = (k: number): StagedLumas => ({
      a: output.bytes.subarray(k * this.plane, (k + 1) * this.plane),
      b: output.bytes.subarray(half + k * this.plane, half + (k + 1) * this.plane),
      minusOnDevice: direct[k] !== undefined,
    });
    const results = batch.map(({ job }) => {
      const marked = framesOf(job).map((frame) => {
        const written = writtenVariants(frame, job.want, minus[f], staged(f));
        f++;
        return written;
      });
      const [first, ...next] = marked;
      return { ...first, ...(next.length > 0 ? { next } : {}) };
    });
    for (const [j, pending] of batch.entries()) pending.resolve(results[j] as ModulateResult);
  }

  private release(parts: { stream?: number; arena?: Arena; input?: PinnedMemory; output?: PinnedMemory }): void {
    const { driver } = this.cuda;
    attemptAll([
      () => parts.stream && driver.synchronize(parts.stream), // work a failed batch left queued ends first
      () => parts.arena?.free(),
      () => parts.input && driver.freePinned(parts.input),
      () => parts.output && driver.freePinned(parts.output),
      () => parts.stream && driver.destroyStream(parts.stream),
    ]);
  }

  /**
   * Lets the batches on the device finish (or fail), then frees every slot. Returns the jobs that
   * never started, for the caller to run elsewhere.
   */
  async close(): Promise<PendingJob[]> {
    this.broken = true;
    const waiting = this.queue.splice(0);
    await Promise.allSettled([...this.running]);
    for (const slot of this.slots.splice(0)) this.release(slot);
    this.idle.length = 0;
    return [...waiting, ...this.queue.splice(0)];
  }
}
