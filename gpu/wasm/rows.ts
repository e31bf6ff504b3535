/**
 * f32 planes in WebAssembly memory, and the two loops of the DTCWT that run on them in wasm
 * (rows.wat): the weighted sum of rows that every column filter is made of, and the transpose
 * between the two passes. The transform's own code (../dtcwt/) is unchanged: a plane whose data
 * is a view of this memory is filtered here, any other plane in JavaScript.
 *
 * An arena, reset at the start of each transform (they are synchronous, so one per thread at a
 * time): planes are handed out from the bottom up and never freed singly. The transform copies
 * its results out before returning, so no view of this memory leaves it (a view would also carry
 * the whole memory through postMessage). When a transform needs more than the arena holds, the
 * rest of its planes are plain arrays and it says so (`overflowed`): the caller runs it again
 * after a reset, which grows the memory, so every result comes from the same code.
 */
import { WASM_BASE64 } from './rows-wasm.js';

interface Exports {
  memory: WebAssembly.Memory;
  sum_rows: (y: number, rows: number, coeffs: number, taps: number, n: number) => void;
  transpose: (y: number, x: number, rows: number, cols: number) => void;
}

const PAGE = 65536;
const MAX_TAPS = 64;
/** Filters whose splatted coefficients are kept (colifilt takes turns with four). */
const SLOTS = 4;
const ROWS_BYTES = 4 * MAX_TAPS;
const COEFFS_BYTES = 16 * MAX_TAPS;
/** Bytes at the bottom for one call's row addresses and the slots' splatted coefficients. */
const SCRATCH = ROWS_BYTES + SLOTS * COEFFS_BYTES;
/** What a transform allocates, as a multiple of its image (measured: 14–24 for the sizes the mark uses). */
const ARENA_IMAGES = 32;

export class WasmPlanes {
  private readonly x: Exports;
  private top = SCRATCH;
  private wanted = 0;
  /** the arena ran out since the last reset (the planes after that are plain arrays) */
  overflowed = false;

  constructor() {
    this.x = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64')), {})
      .exports as unknown as Exports;
  }

  private get buffer(): ArrayBuffer {
    return this.x.memory.buffer;
  }

  /** Starts a transform of an image of `pixels` values: everything handed out before is given back. */
  reset(pixels: number): void {
    const need = Math.max(this.wanted, SCRATCH + ARENA_IMAGES * 4 * pixels);
    if (this.buffer.byteLength < need) this.x.memory.grow(Math.ceil((need - this.buffer.byteLength) / PAGE));
    this.top = SCRATCH;
    this.wanted = 0;
    this.overflowed = false;
  }

  /** A zeroed plane of n values in this memory, or a plain array when the arena is full. */
  alloc(n: number): Float32Array {
    const bytes = Math.ceil((4 * n) / 16) * 16;
    if (this.top + bytes > this.buffer.byteLength) {
      this.wanted = Math.max(this.wanted, 2 * this.buffer.byteLength);
      this.overflowed = true;
      return new Float32Array(n);
    }
    const out = new Float32Array(this.buffer, this.top, n);
    out.fill(0);
    this.top += bytes;
    return out;
  }

  /** A copy of `data` in this memory. */
  copyIn(data: Float32Array): Float32Array {
    const out = this.alloc(data.length);
    out.set(data);
    return out;
  }

  owns(a: { buffer: ArrayBufferLike }): boolean {
    return a.buffer === this.buffer;
  }

  /** Views of the scratch area, made again only when the memory grows (sumRows runs once per output row). */
  private scratch?: { buffer: ArrayBuffer; rows: Int32Array; coeffs: Float32Array[] };
  /**
   * The coefficient arrays splatted in the slots: a column filter passes the same one (or the
   * same two or four in turn) for every output row, so each is splatted once per pass. An array
   * passed again is taken to hold the same values (the filters build theirs once per pass).
   */
  private readonly splatted: Array<readonly number[] | undefined> = new Array(SLOTS).fill(undefined);
  private nextSlot = 0;

  /** y[yStart + j] = Σ_k coeffs[k] · x[rows[k]·n + j] for j < n (y and x in this memory). */
  sumRows(
    y: Float32Array,
    yStart: number,
    x: Float32Array,
    rows: readonly number[],
    coeffs: readonly number[],
    n: number,
  ): void {
    const taps = rows.length;
    if (taps > MAX_TAPS) throw new RangeError(`sumRows: ${taps} taps, at most ${MAX_TAPS}`);
    if (this.scratch?.buffer !== this.buffer) {
      const coeffsAt = (slot: number) => new Float32Array(this.buffer, ROWS_BYTES + slot * COEFFS_BYTES, 4 * MAX_TAPS);
      this.scratch = {
        buffer: this.buffer,
        rows: new Int32Array(this.buffer, 0, MAX_TAPS),
        coeffs: Array.from({ length: SLOTS }, (_, slot) => coeffsAt(slot)),
      };
    }
    const { rows: scratchRows, coeffs: scratchCoeffs } = this.scratch;
    for (let k = 0; k < taps; k++) scratchRows[k] = x.byteOffset + 4 * (rows[k] as number) * n;
    let slot = this.splatted.indexOf(coeffs);
    if (slot < 0) {
      slot = this.nextSlot;
      this.nextSlot = (slot + 1) % SLOTS;
      const c = scratchCoeffs[slot] as Float32Array;
      for (let k = 0; k < taps; k++) c.fill(coeffs[k] as number, 4 * k, 4 * k + 4);
      this.splatted[slot] = coeffs;
    }
    this.x.sum_rows(y.byteOffset + 4 * yStart, 0, ROWS_BYTES + slot * COEFFS_BYTES, taps, n);
  }

  /** y = transpose of x (rows × cols), both in this memory. */
  transpose(y: Float32Array, x: Float32Array, rows: number, cols: number): void {
    this.x.transpose(y.byteOffset, x.byteOffset, rows, cols);
  }
}

let planes: WasmPlanes | undefined;

/** This thread's planes (made on first use). */
export function wasmPlanes(): WasmPlanes {
  planes ??= new WasmPlanes();
  return planes;
}
