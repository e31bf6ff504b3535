import type { Rect } from './geometry.js';
import { bicubic, type Homography } from './homography.js';

/**
 * A leak frame put back into the original's place, for scoring: the leak's proxy (the whole leak
 * frame area-scaled to the reference plane's size, see sampleVideo in ../../media/video-samples.ts) is
 * sampled where the found map says each reference pixel was, its tones mapped back through
 * the fitted curve, and what the leak does not show is taken from the original, so it scores
 * nothing.
 */
export interface LeakPlacement {
  /** the leak's picture (without black bars) in proxy pixels */
  active: Rect;
  /** where each reference plane point is in the proxy (continuous coordinates of each) */
  map: Homography;
  /** the reference pixels that may be scored: those of this rectangle whose point the map takes inside `active` */
  inside: Rect;
  /** leak value (whole grey levels) to original value */
  tone: Uint8Array;
  /** each frame's map refined on its own (./frame-map.ts): a leak filmed by hand */
  perFrame?: boolean;
}

/**
 * Proxy pixels kept clear of the active picture's edge, so that no restored pixel reads the black
 * beside it (a turned leak's corners); `inside` keeps a rectangle's blurred border out.
 */
const EDGE = 1;

/** The inner part of a rectangle (by `by` pixels, clipped to width × height), on whole pixels. */
export function insetRect(r: Rect, by: number, width: number, height: number): Rect {
  const x = Math.max(0, Math.ceil(r.x + by));
  const y = Math.max(0, Math.ceil(r.y + by));
  return {
    x,
    y,
    w: Math.max(0, Math.min(width, Math.floor(r.x + r.w - by)) - x),
    h: Math.max(0, Math.min(height, Math.floor(r.y + r.h - by)) - y),
  };
}

/** The leak's proxy frame (width × height, grey levels with fractions) restored into the original `original`. */
export function restoreLeak(
  proxy: Float32Array,
  original: Float32Array,
  width: number,
  height: number,
  p: LeakPlacement,
): Float32Array {
  const out = Float32Array.from(original);
  const { inside, tone, active, map: h } = p;
  const [left, top] = [active.x + EDGE, active.y + EDGE];
  const [right, bottom] = [active.x + active.w - EDGE, active.y + active.h - EDGE];
  for (let y = inside.y; y < inside.y + inside.h; y++) {
    const cy = y + 0.5;
    for (let x = inside.x; x < inside.x + inside.w; x++) {
      const cx = x + 0.5;
      const d = h[6] * cx + h[7] * cy + h[8];
      const u = (h[0] * cx + h[1] * cy + h[2]) / d;
      const v = (h[3] * cx + h[4] * cy + h[5]) / d;
      if (!(d > 0) || u < left || u > right || v < top || v > bottom) continue;
      const value = bicubic(proxy, width, height, u - 0.5, v - 0.5);
      // The tone curve between its whole-level entries, so the fraction survives it.
      const k = Math.min(254, Math.max(0, Math.floor(value)));
      const lo = tone[k] as number;
      out[y * width + x] = lo + ((tone[k + 1] as number) - lo) * (value - k);
    }
  }
  return out;
}
