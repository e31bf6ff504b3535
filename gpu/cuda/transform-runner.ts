/**
 * The backend's forward and inverse transforms (detection and tests use them; the mark runs whole in
 * mark-lane.ts): a program per shape, laid out once and kept for the next call of that shape, frames
 * in batches of up to BATCH, one batch on the device at a time.
 */
import type { Frame, Transform } from '../backend.js';
import type { DtcwtFilters } from '../dtcwt/filters.js';
import { Arena } from './arena.js';
import type { CudaContext } from './device.js';
import { attemptAll, type PinnedMemory } from './driver.js';
import { type PlaneRef, Program } from './program.js';
import { forwardSteps, inverseSteps, type LevelShape, newLevel, tapsOf } from './transform.js';

const BATCH = 16;
const KEPT = 4;

interface Io {
  buffer: string;
  bytes: number;
}

interface Shape {
  program: Program;
  inputs: Io[];
  outputs: Io[];
}

interface Ready extends Shape {
  arena: Arena;
  input: PinnedMemory;
  output: PinnedMemory;
}

const io = (buffer: string, bytes: number): Io => ({ buffer, bytes });
const floats = (p: PlaneRef) => p.rows * p.cols * 4;

export class TransformRunner {
  private readonly kept = new Map<string, Ready>();
  private stream = 0;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly cuda: CudaContext) {}

  forward(
    frames: readonly Frame[],
    levels: number,
    filters: DtcwtFilters,
    firstHighpass: number,
    filterKey: string,
  ): Promise<Transform[]> {
    const { height, width } = frames[0] as Frame;
    const key = `f:${height}x${width}:${levels}:${firstHighpass}:${filterKey}`;
    const make = (): Shape => {
      const p = new Program();
      const image = p.plane('image', height, width);
      const out = forwardSteps(p, tapsOf(p, filters), image, levels, firstHighpass);
      const lowpass = out.lowpass as PlaneRef;
      const bytes = (s: LevelShape) => s.rows * s.cols * 24;
      const outputs = [io(lowpass.buffer, floats(lowpass))];
      for (const s of out.levels) if (s.level) outputs.push(io(s.level.re, bytes(s)), io(s.level.im, bytes(s)));
      return { program: p, inputs: [io(image.buffer, floats(image))], outputs };
    };
    return this.inBatches(
      key,
      make,
      frames,
      (f) => [f.image],
      (parts) => {
        const [low, ...rest] = parts as Float32Array[];
        return this.transformOf(low as Float32Array, rest, height, width, levels, firstHighpass);
      },
    );
  }

  /** Rebuilds a Transform from a forward program's downloaded parts, zeros where a level was skipped. */
  private transformOf(
    low: Float32Array,
    levelParts: Float32Array[],
    height: number,
    width: number,
    levels: number,
    firstHighpass: number,
  ): Transform {
    let rows = height + (height % 2);
    let cols = width + (width % 2);
    const highpasses: Transform['highpasses'] = [];
    for (let n = 1; n <= levels; n++) {
      if (n > 1) {
        rows = (rows + (rows % 4 ? 2 : 0)) / 2;
        cols = (cols + (cols % 4 ? 2 : 0)) / 2;
      }
      const size = (rows / 2) * (cols / 2) * 6;
      const computed = n >= firstHighpass;
      const re = computed ? (levelParts.shift() as Float32Array) : new Float32Array(size);
      const im = computed ? (levelParts.shift() as Float32Array) : new Float32Array(size);
      highpasses.push({ re, im, rows: rows / 2, cols: cols / 2 });
    }
    return { lowpass: { data: low, rows, cols }, highpasses, height, width };
  }

  inverse(transforms: readonly Transform[], filters: DtcwtFilters, filterKey: string): Promise<Float32Array[]> {
    const t0 = transforms[0] as Transform;
    const key = `${this.inverseKey(t0)}:${filterKey}`;
    const make = (): Shape => {
      const p = new Program();
      const low = p.plane('lowpass', t0.lowpass.rows, t0.lowpass.cols);
      const levels: LevelShape[] = t0.highpasses.map((h) => ({ ...h, level: newLevel(p, h.rows, h.cols) }));
      const out = inverseSteps(p, tapsOf(p, filters), low, low, levels, t0.height, t0.width);
      let plane = out.plane;
      if (!plane) {
        plane = p.plane('zeros', t0.height, t0.width);
        p.zero(plane.buffer);
      }
      const inputs = [io(low.buffer, floats(low))];
      for (const l of levels)
        if (l.level) inputs.push(io(l.level.re, l.rows * l.cols * 24), io(l.level.im, l.rows * l.cols * 24));
      return { program: p, inputs, outputs: [io(plane.buffer, floats(plane))] };
    };
    const partsOf = (t: Transform) => [t.lowpass.data, ...t.highpasses.flatMap((h) => [h.re, h.im])];
    return this.inBatches(key, make, transforms, partsOf, (parts) => parts[0] as Float32Array);
  }

  /** What an inverse's program depends on: transforms of one key run as one batch. */
  inverseKey(t: Transform): string {
    const shapes = t.highpasses.map((h) => `${h.rows}x${h.cols}`).join(',');
    return `i:${t.height}x${t.width}:${t.lowpass.rows}x${t.lowpass.cols}:${shapes}`;
  }

  /** Runs items through a shape's program, BATCH at a time, one call after another. */
  private inBatches<I, R>(
    key: string,
    make: () => Shape,
    items: readonly I[],
    inputsOf: (item: I) => Float32Array[],
    result: (outputs: Float32Array[]) => R,
  ): Promise<R[]> {
    const run = async () => {
      const ready = this.ready(key, make);
      const results: R[] = [];
      for (let start = 0; start < items.length; start += BATCH) {
        const batch = items.slice(start, start + BATCH);
        const outputs = await this.runBatch(ready, batch.map(inputsOf));
        results.push(...outputs.map(result));
      }
      return results;
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private ready(key: string, make: () => Shape): Ready {
    const found = this.kept.get(key);
    if (found) return found;
    const { driver, kernels } = this.cuda;
    if (!this.stream) this.stream = driver.createStream();
    if (this.kept.size >= KEPT) {
      const [oldKey, old] = this.kept.entries().next().value as [string, Ready];
      this.kept.delete(oldKey);
      this.release(old);
    }
    const shape = make();
    const arena = new Arena(driver, shape.program, BATCH, kernels);
    const total = (list: Io[]) => list.reduce((n, x) => n + x.bytes * BATCH, 0);
    const parts: Partial<Ready> = { ...shape, arena };
    try {
      parts.input = driver.allocPinned(total(shape.inputs));
      parts.output = driver.allocPinned(total(shape.outputs));
    } catch (e) {
      this.release(parts);
      throw e;
    }
    const ready = parts as Ready;
    this.kept.set(key, ready);
    return ready;
  }

  private async runBatch(r: Ready, inputs: Float32Array[][]): Promise<Float32Array[][]> {
    const { driver } = this.cuda;
    const n = inputs.length;
    let at = 0;
    r.inputs.forEach((x, i) => {
      inputs.forEach((parts, f) => {
        const part = parts[i] as Float32Array;
        if (part.byteLength !== x.bytes) throw new RangeError('inverse2d: highpass sizes are not consistent');
        r.input.bytes.set(new Uint8Array(part.buffer, part.byteOffset, part.byteLength), at + f * x.bytes);
      });
      driver.upload(r.arena.address(x.buffer), r.input.address + at, n * x.bytes, this.stream);
      at += n * x.bytes;
    });
    r.arena.run({ frames: n, pairs: 0, jobs: 0 }, this.stream);
    at = 0;
    const offsets = r.outputs.map((x) => {
      driver.download(r.output.address + at, r.arena.address(x.buffer), n * x.bytes, this.stream);
      at += n * x.bytes;
      return at - n * x.bytes;
    });
    await driver.wait(this.stream);
    return inputs.map((_, f) =>
      r.outputs.map((x, i) => {
        const start = (offsets[i] as number) + f * x.bytes;
        return new Float32Array(r.output.bytes.slice(start, start + x.bytes).buffer);
      }),
    );
  }

  private release(parts: Partial<Ready>): void {
    const { driver } = this.cuda;
    attemptAll([
      () => this.stream && driver.synchronize(this.stream), // work a failed batch left queued ends first
      () => parts.arena?.free(),
      () => parts.input && driver.freePinned(parts.input),
      () => parts.output && driver.freePinned(parts.output),
    ]);
  }

  async close(): Promise<void> {
    await this.queue;
    for (const r of this.kept.values()) this.release(r);
    this.kept.clear();
    if (this.stream) this.cuda.driver.destroyStream(this.stream);
    this.stream = 0;
  }
}
