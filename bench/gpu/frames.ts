/**
 * Test pictures for bench:gpu: yuv420p frames whose luma has texture at the scales the mark lives in
 * (wavelengths of 16–64 pixels), moving a little from frame to frame, plus fine grain, so that every
 * frame carries a mark of ordinary strength and no two frames are alike.
 */
export function texturedFrame(width: number, height: number, seed: number): Uint8Array {
  const frame = new Uint8Array((width * height * 3) / 2).fill(128);
  let s = (seed * 2654435761) >>> 0;
  const shift = seed * 1.7;
  // sin(a + b) = sin a cos b + cos a sin b: the per-pixel sines come from a row table and a column table
  const sx = Float64Array.from({ length: width }, (_, x) => Math.sin((x + shift) / 9));
  const cx = Float64Array.from({ length: width }, (_, x) => Math.cos((x + shift) / 9));
  const slow = Float64Array.from({ length: width }, (_, x) => 20 * Math.sin(x / 31));
  for (let y = 0; y < height; y++) {
    const row = y * width;
    const cy = Math.cos(y / 23);
    const [sc, cc, vy] = [Math.cos(cy), Math.sin(cy), 55 * Math.cos((y - shift) / 14)];
    for (let x = 0; x < width; x++) {
      s = (s * 1664525 + 1013904223) >>> 0;
      const texture = vy * ((sx[x] as number) * sc + (cx[x] as number) * cc) + (slow[x] as number);
      const v = 128 + texture + ((s >>> 24) - 128) / 16;
      frame[row + x] = v < 0 ? 0 : v > 255 ? 255 : v;
    }
  }
  return frame;
}

/** PSNR of b against a over the first `n` bytes (the luma). */
export function psnr(a: Uint8Array, b: Uint8Array, n: number): number {
  let sum = 0;
  for (let i = 0; i < n; i++) sum += ((a[i] as number) - (b[i] as number)) ** 2;
  return sum === 0 ? Number.POSITIVE_INFINITY : 10 * Math.log10((255 * 255 * n) / sum);
}
