/**
 * A program laid out in device memory for batches of up to `capacity` frames: one allocation holds
 * every buffer, and every launch's kernel arguments are written once into memory koffi owns (the
 * pointer array cuLaunchKernel takes, and the values it points at). Running a batch is then a loop
 * of launches with no allocation and no argument marshalling.
 */
import type { CudaDriver } from './driver.js';
import type { KernelName, Launch, Program, Step } from './program.js';

const ALIGN = 256;
const BLOCK = 256;
const SLOT = 8;

const aligned = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

type Ready = { zero: number; bytes: number; perFrame: boolean } | { launch: Launch; kernel: number; params: number };

export interface BatchShape {
  frames: number;
  pairs: number;
  jobs: number;
}

export class Arena {
  readonly base: number;
  readonly bytes: number;
  private readonly offsets = new Map<string, number>();
  private readonly ready: Ready[];
  private readonly argMemory: unknown;
  private freed = false;

  constructor(
    private readonly driver: CudaDriver,
    readonly program: Program,
    readonly capacity: number,
    kernels: ReadonlyMap<KernelName, number>,
  ) {
    let total = 0;
    for (const spec of program.buffers.values()) {
      this.offsets.set(spec.name, total);
      total += aligned(spec.shared ? spec.bytes : spec.bytes * capacity);
    }
    this.bytes = total;
    this.base = driver.alloc(total);
    const launches = program.steps.filter((s): s is Launch => 'kernel' in s);
    const argBytes = launches.reduce((n, s) => n + s.args.length * 2 * SLOT, 0);
    try {
      this.argMemory = driver.koffi.alloc('uint8_t', Math.max(argBytes, SLOT));
      this.uploadInitial();
      this.ready = this.prepare(program.steps, kernels);
    } catch (e) {
      this.free();
      throw e;
    }
  }

  /** The device address of a buffer (of frame 0 for a per-frame buffer). */
  address(buffer: string): number {
    const offset = this.offsets.get(buffer);
    if (offset === undefined) throw new Error(`arena: no buffer ${buffer}`);
    return this.base + offset;
  }

  private uploadInitial(): void {
    for (const spec of this.program.buffers.values()) {
      if (!spec.init) continue;
      const staging = this.driver.allocPinned(spec.init.length);
      try {
        staging.bytes.set(spec.init);
        this.driver.upload(this.address(spec.name), staging.address, spec.init.length, 0);
        this.driver.synchronize(0);
      } finally {
        this.driver.freePinned(staging);
      }
    }
  }

  private prepare(steps: readonly Step[], kernels: ReadonlyMap<KernelName, number>): Ready[] {
    const { koffi } = this.driver;
    const start = Number(koffi.address(this.argMemory));
    const total = steps.reduce((n, s) => n + ('kernel' in s ? s.args.length * 2 * SLOT : 0), 0);
    const view = new DataView(koffi.view(this.argMemory, Math.max(total, SLOT)));
    let at = 0;
    return steps.map((step): Ready => {
      if ('zero' in step) {
        const spec = this.program.buffers.get(step.zero);
        if (!spec) throw new Error(`arena: no buffer ${step.zero}`);
        return { zero: this.address(step.zero), bytes: spec.bytes, perFrame: !spec.shared };
      }
      const kernel = kernels.get(step.kernel);
      if (kernel === undefined) throw new Error(`arena: kernel ${step.kernel} is not loaded`);
      const params = start + at;
      const values = at + step.args.length * SLOT;
      step.args.forEach((arg, i) => {
        const slot = values + i * SLOT;
        view.setBigUint64(at + i * SLOT, BigInt(start + slot), true);
        if (arg.kind === 'buffer') view.setBigUint64(slot, BigInt(this.address(arg.name) + arg.byteOffset), true);
        else if (arg.kind === 'i32') view.setInt32(slot, arg.value, true);
        else view.setFloat32(slot, arg.value, true);
      });
      at = values + step.args.length * SLOT;
      return { launch: step, kernel, params };
    });
  }

  /** Queues the program's work for a batch on a stream (returns before the device is done). */
  run(shape: BatchShape, stream: number): void {
    if (shape.frames > this.capacity) throw new RangeError(`arena: ${shape.frames} frames for ${this.capacity}`);
    for (const r of this.ready) {
      if ('zero' in r) {
        this.driver.zero(r.zero, r.perFrame ? r.bytes * shape.frames : r.bytes, stream);
        continue;
      }
      const { span, elements, maxBlocks } = r.launch;
      const rows = span === 'frames' ? shape.frames : span === 'pairs' ? shape.pairs : 1;
      const threads = span === 'jobs' ? shape.jobs : elements;
      const blocks = Math.min(Math.ceil(threads / BLOCK), maxBlocks ?? Number.POSITIVE_INFINITY);
      if (rows > 0 && blocks > 0) this.driver.launch(r.kernel, [blocks, rows], BLOCK, r.params, stream);
    }
  }

  /** Frees the device memory and the argument blocks; safe to call twice, and after a failed construction. */
  free(): void {
    if (this.freed) return;
    this.freed = true;
    if (this.argMemory) this.driver.koffi.free(this.argMemory);
    this.driver.free(this.base);
  }
}
