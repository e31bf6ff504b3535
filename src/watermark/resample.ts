/**
 * The video mark is computed at half resolution (the scales it lives in survive downscaling, and
 * the transform costs a quarter) and its change is brought back to full size. Odd sizes: the
 * half frame is floor(size / 2); a last odd row or column is averaged from what exists.
 */
export function halfSize(width: number, height: number): { width: number; height: number } {
  return { width: Math.max(1, Math.floor(width / 2)), height: Math.max(1, Math.floor(height / 2)) };
}

/** 2×2 box average of 8-bit luma into floats. */
export function downsampleHalf(luma: Uint8Array, width: number, height: number): Float32Array {
  const h = halfSize(width, height);
  const out = new Float32Array(h.width * h.height);
  for (let i = 0; i < h.height; i++) {
    const r0 = 2 * i * width;
    const r1 = Math.min(2 * i + 1, height - 1) * width;
    for (let j = 0; j < h.width; j++) {
      const c0 = 2 * j;
      const c1 = Math.min(2 * j + 1, width - 1);
      out[i * h.width + j] =
        ((luma[r0 + c0] as number) + (luma[r0 + c1] as number) + (luma[r1 + c0] as number) + (luma[r1 + c1] as number)) * 0.25;
    }
  }
  return out;
}

/** For each full-size position, the two half-size neighbours and the weight of the second. */
function axisMap(full: number, half: number): { lo: Int32Array; hi: Int32Array; t: Float32Array } {
  const lo = new Int32Array(full);
  const hi = new Int32Array(full);
  const t = new Float32Array(full);
  for (let x = 0; x < full; x++) {
    // Pixel centres: full x sits at half-coordinate (x - 0.5) / 2 (the box filter's centre).
    const u = (x - 0.5) / 2;
    const i = Math.floor(u);
    lo[x] = Math.min(half - 1, Math.max(0, i));
    hi[x] = Math.min(half - 1, Math.max(0, i + 1));
    t[x] = u - i;
  }
  return { lo, hi, t };
}

/** Bilinear upsampling of a half-size plane to width × height. */
export function upsampleDouble(plane: Float32Array, width: number, height: number): Float32Array {
  const h = halfSize(width, height);
  const cols = axisMap(width, h.width);
  const rows = axisMap(height, h.height);
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const a = (rows.lo[y] as number) * h.width;
    const b = (rows.hi[y] as number) * h.width;
    const fy = rows.t[y] as number;
    for (let x = 0; x < width; x++) {
      const c0 = cols.lo[x] as number;
      const c1 = cols.hi[x] as number;
      const fx = cols.t[x] as number;
      const top = (plane[a + c0] as number) * (1 - fx) + (plane[a + c1] as number) * fx;
      const bottom = (plane[b + c0] as number) * (1 - fx) + (plane[b + c1] as number) * fx;
      out[y * width + x] = top * (1 - fy) + bottom * fy;
    }
  }
  return out;
}
