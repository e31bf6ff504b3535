/**
 * The one interface every DTCWT backend implements (docs/architecture.md, "The watermark"): the CPU worker
 * pool (cpu-pool.ts), CUDA (cuda/backend.ts) and the single-thread reference (cpu-direct.ts).
 * Callers (ingest, embed, detect) only see this, so a backend can be swapped without touching
 * watermark code, and one test suite can compare all of them.
 *
 * Float32 is the working type: video frames are 8-bit, so f32 storage costs nothing in accuracy
 * and halves memory traffic, and it is what the GPU computes in. The float64 reference path stays
 * available through gpu/dtcwt/cpu.ts directly, for tests against python's coefficients.
 */
import type { Dtcwt2d } from './dtcwt/cpu.js';
import { type BiortName, type DtcwtFilters, dtcwtFilters, type QshiftName } from './dtcwt/filters.js';
import type { ModulateJob, ModulateResult } from './modulate-job.js';
import type { MarkPartTimes } from './thread-cpu.js';

export type { Highpass, Plane } from './dtcwt/cpu.js';
export type { BiortName, QshiftName } from './dtcwt/filters.js';

/** A float32 forward transform: coarsest lowpass plus one complex highpass level per level, finest first. */
export type Transform = Dtcwt2d<Float32Array>;

/** Filter names rather than coefficient arrays, so a request can cross a thread or a device boundary. */
export interface FilterNames {
  biort?: BiortName;
  qshift?: QshiftName;
}

/** One frame of a batch: a row-major height x width luma plane. */
export interface Frame {
  image: Float32Array;
  height: number;
  width: number;
}

/**
 * Frame memory that a device backend reaches directly (CUDA page-locks it), so that frames go to
 * the device and come back without a copy on the main thread. A frame pool makes its frames here
 * where it can, and unpins them all when its film is done.
 */
export interface FramePinning {
  /**
   * A frame of `bytes` in shared memory of its own, pinned; undefined where none can be (a cap, a
   * driver that refuses): the caller then makes an ordinary one, which is copied through staging.
   */
  pinnedFrame(bytes: number): Uint8Array | undefined;
  /** Unpins frames pinnedFrame() made, once no copy to or from them is in flight. */
  unpin(frames: readonly Uint8Array[]): Promise<void>;
}

/**
 * Ownership: forward and inverse take their input arrays. A backend may transfer them to another
 * thread (the pool does, to avoid copying frames), which leaves the caller's arrays detached
 * (length 0). Pass a copy (`image.slice()`) to keep using an input afterwards.
 */
export interface DtcwtBackend {
  /** What ran the transform, for logs and `drm ingest` output, e.g. "cpu (8 workers)". */
  readonly name: string;
  /** Why this backend and not the GPU, where `auto` chose it (e.g. "CUDA not used: no NVIDIA driver"). */
  readonly note?: string;
  /** Frames of this size a caller should keep in flight to keep it busy (a batching backend: several batches). */
  framesInFlight?(width: number, height: number): number;
  /** where frames' memory can be pinned for direct copies (a GPU backend) */
  readonly pinning?: FramePinning;
  /** firstHighpass: highpasses of finer levels are not needed and come back as zeros (default 1: all). */
  forward(
    image: Float32Array,
    height: number,
    width: number,
    levels: number,
    filters?: FilterNames,
    firstHighpass?: number,
  ): Promise<Transform>;
  inverse(transform: Transform, filters?: FilterNames): Promise<Float32Array>;
  /** Many frames at once; results are in input order. A batching backend (CUDA) runs them as one batch. */
  forwardMany(
    frames: readonly Frame[],
    levels: number,
    filters?: FilterNames,
    firstHighpass?: number,
  ): Promise<Transform[]>;
  inverseMany(transforms: readonly Transform[], filters?: FilterNames): Promise<Float32Array[]>;
  /**
   * The video mark's whole per-frame job (gpu/modulate.ts): reduce, transform, modulate, invert,
   * write the variants. One call, so the pool runs it all in a worker. Takes `job.frame`.
   */
  modulate(job: ModulateJob): Promise<ModulateResult>;
  /**
   * CPU seconds that modulate jobs have spent so far, by part, where the backend runs them on
   * threads whose CPU it can read (the pool, on Linux). A GPU backend's work is not CPU time.
   */
  markTimes?(): MarkPartTimes;
  /** Releases threads / device memory; later calls reject. Idempotent. */
  close(): Promise<void>;
}

const BIORT_NAMES: readonly string[] = ['near_sym_a', 'near_sym_b'];
const QSHIFT_NAMES: readonly string[] = ['qshift_a', 'qshift_b'];

/**
 * Checks the names before use: they may arrive from another thread or a config file, and an unknown
 * name would otherwise surface as an undefined-property TypeError deep inside the filters.
 */
export function resolveFilters(names: FilterNames = {}): DtcwtFilters {
  const b = names.biort ?? 'near_sym_a';
  const q = names.qshift ?? 'qshift_a';
  if (!BIORT_NAMES.includes(b)) throw new RangeError(`unknown biort filter ${JSON.stringify(b)}`);
  if (!QSHIFT_NAMES.includes(q)) throw new RangeError(`unknown qshift filter ${JSON.stringify(q)}`);
  return dtcwtFilters(b, q);
}

/**
 * An array that owns its whole ArrayBuffer, so it can be put in a transfer list. Posting a view
 * would clone or detach its entire underlying buffer (a Node Buffer pool slab, a larger frame
 * store), so views are copied first. Shared memory needs neither transfer nor copy.
 */
export function ownedArray<T extends Float32Array | Uint8Array>(a: T): T {
  if (typeof SharedArrayBuffer !== 'undefined' && a.buffer instanceof SharedArrayBuffer) return a;
  return a.byteOffset === 0 && a.byteLength === a.buffer.byteLength ? a : (a.slice() as T);
}

/** Adds an array's buffer to a transfer list once: listing a buffer twice is a DataCloneError. */
export function addTransfer(list: ArrayBuffer[], a: Float32Array): void {
  const buffer = a.buffer;
  if (buffer instanceof ArrayBuffer && !list.includes(buffer)) list.push(buffer);
}

/** A copy of a transform's structure whose arrays can all be transferred, plus their buffers. */
export function transferableTransform(t: Transform): { transform: Transform; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  const own = (a: Float32Array) => {
    const o = ownedArray(a);
    addTransfer(transfer, o);
    return o;
  };
  const transform: Transform = {
    lowpass: { data: own(t.lowpass.data), rows: t.lowpass.rows, cols: t.lowpass.cols },
    highpasses: t.highpasses.map((h) => ({ re: own(h.re), im: own(h.im), rows: h.rows, cols: h.cols })),
    height: t.height,
    width: t.width,
  };
  return { transform, transfer };
}
