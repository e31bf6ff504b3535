import { fitHomography, scoreOf } from './fit-homography.js';
import type { LeakPlacement } from './restore.js';

/**
 * A leak filmed off a screen by hand moves a little from frame to frame (a slowly varying
 * homography): one map for the whole leak leaves each frame off by a pixel or two, which is the
 * size of the mark. Each scored frame's map is refined on its own, from the leak's map, on that
 * frame and its original at the plane's size (no turned starts; blur σ 1 then sharp), and kept
 * only where it matches better. Measured: about 15 ms per frame at 160 × 90 and 70 ms at
 * 480 × 270 (a 1080p film’s plane), so a minute of 1080p leak takes some 4 s more; a leak shown
 * whole (only re-encoded, rescaled or re-timed) skips it (./detect.ts).
 */
export function placeFrame(
  proxy: Float32Array,
  original: Float32Array,
  width: number,
  height: number,
  placement: LeakPlacement,
): LeakPlacement {
  const pairs = [{ leak: { data: proxy, width, height }, original: { data: original, width, height } }];
  const fit = fitHomography(pairs, placement.map, { turns: [0], levels: [1, 0], iterations: 8 });
  const before = scoreOf(pairs, placement.map);
  return fit.score > before ? { ...placement, map: fit.map } : placement;
}
