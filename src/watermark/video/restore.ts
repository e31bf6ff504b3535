import type { Rect } from './geometry.js';

/**
 * A leak frame put back into the original's place, for scoring: the leak's proxy (the whole leak
 * frame area-scaled to the reference plane's size, see sampleVideo in ../../media/video-samples.ts) is
 * sampled where the found rectangle says each reference pixel was, its tones mapped back through
 * the fitted curve, and what the leak does not show is taken from the original, so it scores
 * nothing.
 */
export interface LeakPlacement {
  /** the leak's picture (without black bars) in proxy pixels */
  active: Rect;
  /** where that picture sits in the reference plane, in plane pixels */
  rect: Rect;
  /** the reference pixels that are scored: the rectangle, inset so that its blurred edge is not */
  inside: Rect;
  /** leak value (whole grey levels) to original value */
  tone: Uint8Array;
}

/** The inner part of a rectangle (by `by` pixels, clipped to width × height), on whole pixels. */
export function insetRect(r: Rect, by: number, width: number, height: number): Rect {
  const x = Math.max(0, Math.ceil(r.x + by));
  const y = Math.max(0, Math.ceil(r.y + by));
  return { x, y, w: Math.max(0, Math.min(width, Math.floor(r.x + r.w - by)) - x), h: Math.max(0, Math.min(height, Math.floor(r.y + r.h - by)) - y) };
}

/** For each output position along one axis, the proxy sample it reads (lower index and weight). */
function axis(from: number, count: number, rectStart: number, rectSize: number, activeStart: number, activeSize: number, limit: number) {
  const lo = new Int32Array(count);
  const hi = new Int32Array(count);
  const t = new Float32Array(count);
  for (let k = 0; k < count; k++) {
    // Pixel centres: plane pixel p is at (p + 0.5 − rect start) / rect size of the active picture.
    const u = activeStart + ((from + k + 0.5 - rectStart) / rectSize) * activeSize - 0.5;
    const c = Math.min(limit - 1, Math.max(0, u));
    const i = Math.floor(c);
    lo[k] = i;
    hi[k] = Math.min(limit - 1, i + 1);
    t[k] = c - i;
  }
  return { lo, hi, t };
}

/** The leak's proxy frame (width × height, grey levels with fractions) restored into the original `original`. */
export function restoreLeak(proxy: Float32Array, original: Float32Array, width: number, height: number, p: LeakPlacement): Float32Array {
  const out = Float32Array.from(original);
  const { inside, tone } = p;
  const xs = axis(inside.x, inside.w, p.rect.x, p.rect.w, p.active.x, p.active.w, width);
  const ys = axis(inside.y, inside.h, p.rect.y, p.rect.h, p.active.y, p.active.h, height);
  for (let v = 0; v < inside.h; v++) {
    const r0 = (ys.lo[v] as number) * width;
    const r1 = (ys.hi[v] as number) * width;
    const fy = ys.t[v] as number;
    const row = (inside.y + v) * width + inside.x;
    for (let u = 0; u < inside.w; u++) {
      const a = xs.lo[u] as number;
      const b = xs.hi[u] as number;
      const fx = xs.t[u] as number;
      const top = (proxy[r0 + a] as number) * (1 - fx) + (proxy[r0 + b] as number) * fx;
      const bottom = (proxy[r1 + a] as number) * (1 - fx) + (proxy[r1 + b] as number) * fx;
      const value = top * (1 - fy) + bottom * fy;
      // The tone curve between its whole-level entries, so the fraction survives it.
      const k = Math.min(254, Math.max(0, Math.floor(value)));
      const lo = tone[k] as number;
      out[row + u] = lo + ((tone[k + 1] as number) - lo) * (value - k);
    }
  }
  return out;
}
