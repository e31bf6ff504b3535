/**
 * The SIMD kernel that writes a frame's variants (variants.wat) and the memory it works in. One
 * instance per thread, made on first use: the module is under 1 KB and compiles in microseconds,
 * and each worker of the CPU pool gets its own memory.
 *
 * Layout for a width × height frame with a reduced δ of rw × rh: the luma, A and B (bytes), two
 * widened δ rows (f32), the column map (lo and hi as byte offsets, t), then the δ plane. Planes
 * and rows are padded by 64 bytes: the kernel works in whole steps of 16 pixels.
 */
import { WASM_BASE64 } from './variants-wasm.js';

const PAGE = 65536;

type VariantsFn = (
  luma: number,
  top: number,
  bottom: number,
  gy: number,
  fy: number,
  a: number,
  b: number,
  n: number,
) => void;
type WidenFn = (row: number, lo: number, hi: number, t: number, out: number, n: number) => void;
interface Exports {
  memory: WebAssembly.Memory;
  variants: VariantsFn;
  widen: WidenFn;
}

/** For each full-size column, the two reduced neighbours and the weight of the second. */
export interface ColumnMap {
  lo: Int32Array;
  hi: Int32Array;
  t: Float32Array;
}

export interface VariantsKernel {
  /** the luma plane to mark (the caller copies it in) */
  luma: Uint8Array;
  /** the marked planes (the caller copies them out) */
  a: Uint8Array;
  b: Uint8Array;
  /** two rows of `width` values for the enlarged δ */
  rows: [Float32Array, Float32Array];
  /** copies in the reduced δ and the column map that `widen` uses */
  load(delta: Float32Array, cols: ColumnMap): void;
  /** row i of the reduced δ, enlarged to full width, into one of `rows` */
  widen(i: number, into: Float32Array): void;
  /** writes row y of A and B: luma ± (top·(1 − fy) + bottom·fy), rounded and clipped */
  row(y: number, top: Float32Array, bottom: Float32Array, fy: number): void;
}

let instance: Exports | undefined;

function exports(): Exports {
  if (!instance)
    instance = new WebAssembly.Instance(new WebAssembly.Module(Buffer.from(WASM_BASE64, 'base64')), {})
      .exports as unknown as Exports;
  return instance;
}

const padded = (bytes: number) => Math.ceil((bytes + 64) / 16) * 16;

/** The kernel laid out for these sizes (memory grown when needed; views are made afresh each call). */
export function variantsKernel(
  width: number,
  height: number,
  reducedWidth: number,
  reducedHeight: number,
): VariantsKernel {
  const { memory, variants, widen } = exports();
  const plane = padded(width * height);
  const row = padded(width * 4);
  const at = {
    luma: 0,
    a: plane,
    b: 2 * plane,
    top: 3 * plane,
    bottom: 3 * plane + row,
    lo: 3 * plane + 2 * row,
    hi: 3 * plane + 3 * row,
    t: 3 * plane + 4 * row,
    delta: 3 * plane + 5 * row,
  };
  const need = at.delta + padded(reducedWidth * reducedHeight * 4);
  if (memory.buffer.byteLength < need) memory.grow(Math.ceil((need - memory.buffer.byteLength) / PAGE));
  const buf = memory.buffer;
  const pixels = width * height;
  return {
    luma: new Uint8Array(buf, at.luma, pixels),
    a: new Uint8Array(buf, at.a, pixels),
    b: new Uint8Array(buf, at.b, pixels),
    rows: [new Float32Array(buf, at.top, width), new Float32Array(buf, at.bottom, width)],
    load(delta, cols) {
      new Float32Array(buf, at.delta, reducedWidth * reducedHeight).set(
        delta.subarray(0, reducedWidth * reducedHeight),
      );
      const lo = new Int32Array(buf, at.lo, width);
      const hi = new Int32Array(buf, at.hi, width);
      for (let x = 0; x < width; x++) {
        lo[x] = 4 * (cols.lo[x] as number);
        hi[x] = 4 * (cols.hi[x] as number);
      }
      new Float32Array(buf, at.t, width).set(cols.t);
    },
    widen(i, into) {
      widen(at.delta + 4 * i * reducedWidth, at.lo, at.hi, at.t, into.byteOffset, width);
    },
    row(y, top, bottom, fy) {
      variants(
        at.luma + y * width,
        top.byteOffset,
        bottom.byteOffset,
        1 - fy,
        fy,
        at.a + y * width,
        at.b + y * width,
        width,
      );
    },
  };
}
