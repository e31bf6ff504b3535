/** Small numeric tools for pictures and the fits made on them (./fit-homography.ts). */

/** A width × height picture blurred by a Gaussian of σ pixels (separable, edges clamped); σ 0 copies it. */
export function blurred(data: Float32Array, width: number, height: number, sigma: number): Float32Array {
  if (sigma <= 0) return Float32Array.from(data);
  const radius = Math.ceil(3 * sigma);
  const kernel = Array.from({ length: 2 * radius + 1 }, (_, k) => Math.exp(-((k - radius) ** 2) / (2 * sigma * sigma)));
  const total = kernel.reduce((a, b) => a + b, 0);
  const weights = kernel.map((k) => k / total);
  const across = new Float32Array(data.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0;
      for (let k = -radius; k <= radius; k++)
        sum += (weights[k + radius] as number) * (data[y * width + Math.min(width - 1, Math.max(0, x + k))] as number);
      across[y * width + x] = sum;
    }
  }
  const out = new Float32Array(data.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      let sum = 0;
      for (let k = -radius; k <= radius; k++)
        sum +=
          (weights[k + radius] as number) * (across[Math.min(height - 1, Math.max(0, y + k)) * width + x] as number);
      out[y * width + x] = sum;
    }
  }
  return out;
}

/** Central differences along x and y (one-sided at the edges), per pixel. */
export function gradients(data: Float32Array, width: number, height: number): { gx: Float32Array; gy: Float32Array } {
  const gx = new Float32Array(data.length);
  const gy = new Float32Array(data.length);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const at = y * width + x;
      const left = data[at - (x > 0 ? 1 : 0)] as number;
      const right = data[at + (x < width - 1 ? 1 : 0)] as number;
      const up = data[at - (y > 0 ? width : 0)] as number;
      const down = data[at + (y < height - 1 ? width : 0)] as number;
      gx[at] = (right - left) / (x > 0 && x < width - 1 ? 2 : 1);
      gy[at] = (down - up) / (y > 0 && y < height - 1 ? 2 : 1);
    }
  }
  return { gx, gy };
}

/** x with a·x = b by Gaussian elimination with partial pivoting; undefined when a is singular. */
export function solve(a: number[][], b: number[]): number[] | undefined {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i] as number]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++)
      if (Math.abs((m[r] as number[])[col] as number) > Math.abs((m[pivot] as number[])[col] as number)) pivot = r;
    if (Math.abs((m[pivot] as number[])[col] as number) < 1e-12) return undefined;
    [m[col], m[pivot]] = [m[pivot] as number[], m[col] as number[]];
    const top = m[col] as number[];
    for (let r = col + 1; r < n; r++) {
      const row = m[r] as number[];
      const f = (row[col] as number) / (top[col] as number);
      if (f !== 0) for (let c = col; c <= n; c++) row[c] = (row[c] as number) - f * (top[c] as number);
    }
  }
  const x = new Array<number>(n).fill(0);
  for (let r = n - 1; r >= 0; r--) {
    const row = m[r] as number[];
    let sum = row[n] as number;
    for (let c = r + 1; c < n; c++) sum -= (row[c] as number) * (x[c] as number);
    x[r] = sum / (row[r] as number);
  }
  return x;
}
