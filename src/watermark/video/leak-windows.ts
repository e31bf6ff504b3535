import { activeArea, alignTime, centralRegion, framePositions, signature } from './align.js';
import { realignPieces } from './align-pieces.js';
import { type CropWindow, findCropWindow } from './crop-window.js';
import { lumaFrameAt } from '../../media/video-frames.js';
import type { VideoDetectOptions, VideoInfo } from './detect-options.js';
import { type FilmWindow, findFilmWindow, orientedThumbs, unflipped as flippedRect } from './film-window.js';
import { findRect } from './find-rect.js';
import type { Rect } from './geometry.js';
import type { LeakSamples } from './leak-samples.js';
import { flipped } from './mirror.js';
import type { LeakThumbs } from './window-search.js';

/** The leak's samples as stage 1 has them, and the reference's thumbnails (./detect-time.ts). */
export interface WindowsInput {
  /** the leak's thumbnails (tw × thumbHeight, its whole frame) and their times in seconds */
  thumbs: readonly Uint8Array[];
  thumbHeight: number;
  times: Float64Array;
  /** the reference's thumbnails (tw × th) and their central signatures, and its frame rate */
  origThumbs: readonly Uint8Array[];
  origSigs: readonly Float32Array[];
  tw: number;
  th: number;
  fps: number;
}

/**
 * What the leak's whole frame may hide: the film inside a window of it (./film-window.ts), or a
 * window of the film it shows (./crop-window.ts). At most one: where both searches find a window,
 * the one whose sample pairs match the original better explains the leak (measured on the bench's
 * pan, a 60% crop: the crop's window 0.99, a window inside the leak 0.78).
 */
export function leakWindows(input: WindowsInput): { film?: FilmWindow; crop?: CropWindow } {
  const { thumbs, thumbHeight: lth, times, origThumbs, origSigs, tw, th, fps } = input;
  const positions = framePositions(times, fps);
  const search = { thumbs, width: tw, height: lth, origThumbs, originalHeight: th, origSigs, positions, fps };
  const film = findFilmWindow(search);
  const crop = findCropWindow({ ...search, active: activeArea(thumbs, tw, lth) });
  if (crop && (!film || crop.score >= film.score)) return { crop };
  return film ? { film: { ...film, matches: matchesInTime(film, search) } } : {};
}

/**
 * Six samples spread over the leak, each with the original frame the whole leak's alignment
 * through the film's window gives it (pieces placed on their own, ./align-pieces.ts). A sample's
 * own best match may be a second off on a pan, where a shift in place passes for a shift in time,
 * and a window placed on it is then shifted to fit (measured on the photographs: the window fell
 * 6 pixels inside the film, and segments of pans read other frames).
 */
function matchesInTime(film: FilmWindow, search: LeakThumbs & { origSigs: readonly Float32Array[] }) {
  const { width, height, positions, origSigs } = search;
  const thumbAt = orientedThumbs(search, film.mirror);
  const region = centralRegion(flippedRect(film.rect, width, height, film.mirror));
  const leakSigs = search.thumbs.map((_, k) => signature(thumbAt(k), width, region));
  const { frameMap } = realignPieces(alignTime(leakSigs, origSigs, positions), leakSigs, origSigs);
  const matched = [...frameMap.keys()].filter((k) => (frameMap[k] as number) >= 0);
  if (matched.length === 0) return film.matches;
  const n = Math.min(6, matched.length);
  return Array.from({ length: n }, (_, m) => {
    const k = matched[Math.floor(((m + 0.5) * matched.length) / n)] as number;
    return { k, i: frameMap[k] as number };
  });
}

/**
 * The film's window in the leak's pixels, placed on the proxies (the whole leak frame at the
 * reference plane's size) of the window's best-matched samples against their original frames, from
 * where the thumbnails put it. A thumbnail pixel is several of the leak's: a window a little inside
 * the film reads it as a crop, and a crop reads weaker (measured on the bench's pan at 50%: |z| 6–10
 * through a window 3% inside the film, 12–15 through the film's own edges).
 */
export async function placeFilmWindow(
  o: VideoDetectOptions,
  reference: string,
  sampled: LeakSamples,
  film: FilmWindow,
  sizes: { orig: VideoInfo; leak: VideoInfo; thumb: { width: number; height: number } },
): Promise<Rect | undefined> {
  const { orig, leak, thumb } = sizes;
  const { width: W, height: H } = orig;
  const size = { width: W, height: H, fps: orig.fps, signal: o.signal };
  const grabbed = await Promise.all(
    film.matches.map(({ k, i }) => Promise.all([sampled.proxyAt(k, size), lumaFrameAt(o.bins, reference, i, size)])),
  );
  const pictures = grabbed.flatMap(([proxy, frame]) =>
    proxy && frame
      ? [
          {
            leak: { data: flipped(frame, W, H, film.mirror), width: W, height: H },
            original: { data: proxy, width: W, height: H },
          },
        ]
      : [],
  );
  const [sx, sy] = [W / thumb.width, H / thumb.height];
  const t = film.rect;
  const near = { x: t.x * sx, y: t.y * sy, w: t.w * sx, h: t.h * sy };
  // The film's aspect in proxy pixels (the proxy stretches the leak's frame to W × H).
  const aspect = ((H / W) * (H / leak.height) * leak.width) / W;
  const r =
    pictures.length > 0
      ? findRect(pictures, W, H, aspect, Math.max(0.2, near.w / W - 0.1), { keepAspect: true, near }).rect
      : near;
  const [lx, ly] = [leak.width / W, leak.height / H];
  const even = (v: number) => 2 * Math.round(v / 2);
  const x = Math.max(0, Math.round(r.x * lx));
  const y = Math.max(0, Math.round(r.y * ly));
  const window = { x, y, w: Math.min(even(r.w * lx), leak.width - x), h: Math.min(even(r.h * ly), leak.height - y) };
  // A window placed off the leak, or too small to hold a picture worth decoding, is not read.
  return window.w >= SMALLEST_WINDOW.w && window.h >= SMALLEST_WINDOW.h ? window : undefined;
}

/** The smallest film window decoded again, in leak pixels. */
const SMALLEST_WINDOW = { w: 32, h: 18 };
