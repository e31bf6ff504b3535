import { activeArea, framePositions } from './align.js';
import { type CropWindow, findCropWindow } from './crop-window.js';
import type { VideoInfo } from './detect-options.js';
import { findFilmWindow } from './film-window.js';
import type { Rect } from './geometry.js';

/** The leak's samples as stage 1 has them, and the reference's thumbnails (./detect-time.ts). */
export interface WindowsInput {
  /** the leak's thumbnails (tw × thumbHeight, its whole frame) and their times in seconds */
  thumbs: readonly Uint8Array[];
  thumbHeight: number;
  times: Float64Array;
  leak: VideoInfo;
  /** the reference's thumbnails (tw × th) and their central signatures, and its frame rate */
  origThumbs: readonly Uint8Array[];
  origSigs: readonly Float32Array[];
  tw: number;
  th: number;
  fps: number;
}

/**
 * What the leak's whole frame may hide: the film inside a window of it (./film-window.ts, in leak
 * pixels, even sizes, to decode the leak again through), or a window of the film it shows
 * (./crop-window.ts). At most one: where both searches find a window, the one whose sample pairs
 * match the original better explains the leak (measured on the bench's pan, a 60% crop: the crop's
 * window 0.99, a window inside the leak 0.78).
 */
export function leakWindows(input: WindowsInput): { film?: Rect; crop?: CropWindow } {
  const { thumbs, thumbHeight: lth, times, leak, origThumbs, origSigs, tw, th, fps } = input;
  const positions = framePositions(times, fps);
  const search = { thumbs, width: tw, height: lth, origThumbs, originalHeight: th, origSigs, positions, fps };
  const film = findFilmWindow(search);
  const crop = findCropWindow({ ...search, active: activeArea(thumbs, tw, lth) });
  if (crop && (!film || crop.score >= film.score)) return { crop };
  if (!film) return {};
  const r = film.rect;
  const [sx, sy] = [leak.width / tw, leak.height / lth];
  const even = (v: number) => 2 * Math.floor(v / 2);
  const x = even(Math.max(0, r.x * sx));
  const y = even(Math.max(0, r.y * sy));
  return { film: { x, y, w: even(Math.min(leak.width - x, r.w * sx)), h: even(Math.min(leak.height - y, r.h * sy)) } };
}
