/**
 * A batch's work on the device, written down before anything runs: the buffers it needs (their size
 * per frame) and the kernel launches in order, with their arguments naming buffers rather than
 * addresses. The executor (executor.ts) lays the buffers out once per batch capacity and turns every
 * step into a ready-made argument block, so a batch costs one upload, the launches and one download.
 */

export type KernelName =
  | 'copy_clamped'
  | 'filter_odd'
  | 'filter_down'
  | 'filter_up'
  | 'q2c'
  | 'c2q'
  | 'reduce_box'
  | 'apply_gains'
  | 'sum_squares'
  | 'sum_abs_diff'
  | 'choose_sources'
  | 'write_variants';

/** The kernel files and the kernels each defines (kernels/*.cu, compiled to ptx/*.ptx). */
export const KERNEL_MODULES: Record<string, readonly KernelName[]> = {
  dtcwt: ['copy_clamped', 'filter_odd', 'filter_down', 'filter_up', 'q2c', 'c2q'],
  frames: ['reduce_box', 'apply_gains', 'sum_squares', 'sum_abs_diff', 'choose_sources', 'write_variants'],
};

export type Arg =
  | { kind: 'buffer'; name: string; byteOffset: number }
  | { kind: 'i32'; value: number }
  | { kind: 'f32'; value: number };

/**
 * What a launch's grid spans: `frames` (one grid row per frame of the batch, x over `elements`),
 * `pairs` (one row per pair of frames compared), or `jobs` (one thread per job, one row).
 */
export type Span = 'frames' | 'pairs' | 'jobs';

export interface Launch {
  kernel: KernelName;
  span: Span;
  /** threads in x per grid row (ignored for `jobs`) */
  elements: number;
  /** grid-stride kernels: at most this many blocks per row, each thread folding several elements */
  maxBlocks?: number;
  args: Arg[];
}

export type Step = Launch | { zero: string };

export interface BufferSpec {
  name: string;
  /** bytes per frame of the batch, or in all when `shared` */
  bytes: number;
  /** one copy for the whole batch (filter taps, tables), not one per frame */
  shared?: boolean;
  /** what a shared buffer holds from the start (filter taps), uploaded once with the layout */
  init?: Uint8Array;
}

/** A float32 plane of every frame of the batch: buffer `buffer`, rows x cols per frame. */
export interface PlaneRef {
  buffer: string;
  rows: number;
  cols: number;
}

export const ptr = (name: string, byteOffset = 0): Arg => ({ kind: 'buffer', name, byteOffset });
export const i32 = (value: number): Arg => ({ kind: 'i32', value });
export const f32 = (value: number): Arg => ({ kind: 'f32', value });

export class Program {
  readonly buffers = new Map<string, BufferSpec>();
  readonly steps: Step[] = [];
  private next = 0;

  /** A buffer of its own; `hint` only makes its name readable in errors and tests. */
  buffer(hint: string, bytes: number, shared = false, init?: Uint8Array): string {
    const name = `${hint}#${this.next++}`;
    this.buffers.set(name, { name, bytes, ...(shared ? { shared } : {}), ...(init ? { init } : {}) });
    return name;
  }

  /** A new float plane per frame. */
  plane(hint: string, rows: number, cols: number): PlaneRef {
    return { buffer: this.buffer(hint, rows * cols * 4), rows, cols };
  }

  launch(kernel: KernelName, elements: number, args: Arg[], span: Span = 'frames', maxBlocks?: number): void {
    this.steps.push({ kernel, span, elements, args, ...(maxBlocks ? { maxBlocks } : {}) });
  }

  zero(buffer: string): void {
    this.steps.push({ zero: buffer });
  }

  /** The floats per frame of a plane's buffer: the stride between frames that kernels take. */
  stride(p: PlaneRef): Arg {
    const spec = this.buffers.get(p.buffer);
    if (!spec) throw new Error(`no buffer ${p.buffer}`);
    return i32(spec.bytes / 4);
  }

  /** out[i][j] = in[clamp(i − top)][clamp(j − left)] into a new rows x cols plane. */
  copyClamped(x: PlaneRef, rows: number, cols: number, top: number, left: number): PlaneRef {
    const y = this.plane('edges', rows, cols);
    const args = [ptr(x.buffer), i32(x.rows), i32(x.cols), this.stride(x), ptr(y.buffer), i32(rows), i32(cols)];
    this.launch('copy_clamped', rows * cols, [...args, this.stride(y), i32(top), i32(left)]);
    return y;
  }
}
