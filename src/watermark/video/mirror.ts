import type { LeakSamples } from './leak-samples.js';

/**
 * A pirate may mirror the picture (left for right, or upside down, or both: a half turn) so that
 * it matches the original nowhere. The leak's thumbnails are compared with the original in each
 * of the four orientations, and the samples of the best one are seen flipped back from then on,
 * thumbnails and proxies alike, so that alignment, geometry and scoring read an unmirrored leak.
 */

export type Mirror = 'none' | 'horizontal' | 'vertical' | 'both';

export const MIRRORS: readonly Mirror[] = ['none', 'horizontal', 'vertical', 'both'];

/** A width × height picture flipped as `mirror` says (a new array; `none` returns the same one). */
export function flipped<T extends Uint8Array | Float32Array>(
  data: T,
  width: number,
  height: number,
  mirror: Mirror,
): T {
  if (mirror === 'none') return data;
  const out = new (data.constructor as { new (n: number): T })(data.length);
  const h = mirror === 'horizontal' || mirror === 'both';
  const v = mirror === 'vertical' || mirror === 'both';
  for (let y = 0; y < height; y++) {
    const from = (v ? height - 1 - y : y) * width;
    const to = y * width;
    for (let x = 0; x < width; x++) out[to + x] = data[from + (h ? width - 1 - x : x)] as number;
  }
  return out;
}

/** The leak's samples seen through `mirror`: thumbnails (width × thumbHeight) and proxies flipped back. */
export function mirroredSamples(
  samples: LeakSamples,
  mirror: Mirror,
  thumb: { width: number; height: number },
): LeakSamples {
  if (mirror === 'none') return samples;
  return {
    thumbs: samples.thumbs.map((t) => flipped(t, thumb.width, thumb.height, mirror)),
    times: samples.times,
    async proxyAt(k, o) {
      const frame = await samples.proxyAt(k, o);
      return frame && flipped(frame, o.width, o.height, mirror);
    },
    async *proxies(ks, o) {
      for await (const frame of samples.proxies(ks, o)) yield flipped(frame, o.width, o.height, mirror);
    },
  };
}
