import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DrmError } from '../../errors.js';
import type { MediaBinaries } from '../../media/binaries.js';
import { probeMedia } from '../../media/probe.js';
import { type Detection, readOut, type SegmentReading } from '../segments.js';
import { placeLeak } from './detect-place.js';
import { chooseFrames, FRAMES_PER_SEGMENT, readSegments, scoreSegments } from './detect-score.js';
import { alignLeakInTime, type LineUpSeconds, stopwatch, type TimedLeak } from './detect-time.js';
import type { Rect } from './geometry.js';
import { corners, type Homography, invert } from './homography.js';
import { DEFAULT_VIDEO_MARK, patternLength, type VideoMarkParams } from './mark.js';
import { referenceParams, VIDEO_REFERENCE, writeVideoReference } from './reference.js';
import { insetRect, type LeakPlacement } from './restore.js';

import type { VideoDetectOptions, VideoInfo } from './detect-options.js';

export type { DetectStage, VideoDetectOptions, VideoInfo } from './detect-options.js';

async function videoOf(bins: MediaBinaries, file: string, role: string): Promise<VideoInfo> {
  const info = await probeMedia(bins, file);
  if (!info.video) throw new DrmError('BAD_REQUEST', `the ${role} ${file} has no video stream`);
  return { ...info.video, duration: info.duration };
}

/**
 * Reads the mark of every segment a leak holds, with its original at hand (detection is
 * not blind). The leak is decoded once (./leak-samples.ts), keeping about every fourth frame as a
 * thumbnail (time alignment) and a proxy at the reference plane's size (geometry and scoring);
 * everything after that reads the proxies and the reference, which are small. Aligns the leak in
 * time and space (./align.ts, ./geometry.ts), undoes its tone curve, puts each sampled leak frame
 * back into the original's geometry (./restore.ts), and scores each segment.
 */
export async function detectVideo(o: VideoDetectOptions): Promise<Detection> {
  const work = fs.mkdtempSync(path.join(o.tempDir ?? os.tmpdir(), 'drm-detect-'));
  try {
    let reference = o.original;
    if (!o.reference) {
      const orig = await videoOf(o.bins, o.original, 'original');
      reference = path.join(work, VIDEO_REFERENCE);
      await writeVideoReference(
        o.bins,
        o.original,
        reference,
        orig.width,
        orig.height,
        o.params ?? DEFAULT_VIDEO_MARK,
        o.signal,
      );
    }
    return await detectOnReference(o, reference, work);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * The three stages on a reference: the leak decoded and lined up in time (./detect-time.ts), put
 * in place in space and tone (./detect-place.ts), and its frames scored (./detect-score.ts). Where
 * the pictures leave two orientations plausible, both are placed and scored, and the reading whose
 * segments carry more of the mark (Σ z²) is kept; `readingsTried` says so, since the mark figure of
 * the best of several readings must count each of them.
 */
async function detectOnReference(o: VideoDetectOptions, reference: string, work: string): Promise<Detection> {
  // The reduction is done in the reference: the leak is brought to the plane's size instead.
  const params = referenceParams(o.params);
  const [orig, leak] = await Promise.all([videoOf(o.bins, reference, 'reference'), videoOf(o.bins, o.leak, 'leak')]);
  const { readings: orientations, seconds } = await alignLeakInTime(o, reference, work, orig, leak);
  const lap = stopwatch();
  let best: OrientedReading | undefined;
  let failure: unknown;
  for (const [n, timed] of orientations.entries()) {
    // The thumbnails (some hundreds of MB for a long film) go before the last scoring; every reading places on them.
    const last = n === orientations.length - 1;
    const release = () => {
      if (last) for (const t of orientations) for (const thumbs of [t.sampled.thumbs, t.origThumbs]) thumbs.splice(0);
    };
    let reading: OrientedReading;
    try {
      reading = await readOrientation(o, { reference, orig, params, release }, timed);
    } catch (err) {
      // A reading whose samples match no frame closely (a window or orientation that lined up by chance) is not
      // the leak's: the others still may be.
      if (!(err instanceof DrmError && err.code === 'BAD_REQUEST')) throw err;
      failure ??= err;
      continue;
    }
    if (!best || markEnergy(reading.segments) > markEnergy(best.segments)) best = reading;
  }
  if (!best) throw failure;
  return detectionOf(o, best, orig.fps, { tried: orientations.length, seconds: { ...seconds, readings: lap() } });
}

/** What one orientation of the leak reads: its segments, and how it was placed. */
interface OrientedReading {
  timed: TimedLeak;
  placed: Awaited<ReturnType<typeof placeLeak>>;
  segments: SegmentReading[];
  /** the samples that line up with an original frame */
  aligned: number[];
}

/** How much of a mark a reading's segments carry: Σ z², a χ² with one degree per segment where there is none. */
const markEnergy = (segments: readonly SegmentReading[]) => segments.reduce((sum, s) => sum + s.z * s.z, 0);

async function readOrientation(
  o: VideoDetectOptions,
  job: { reference: string; orig: VideoInfo; params: VideoMarkParams; release: () => void },
  timed: TimedLeak,
): Promise<OrientedReading> {
  const { reference, orig, params } = job;
  const { width: W, height: H, fps } = orig;
  o.onProgress?.('align', 0, 2);
  const placed = await placeLeak(o, reference, timed, orig, timed.shown);
  job.release();
  o.onProgress?.('align', 1, 2);
  const { bySegment, aligned, chosen } = chooseFrames(
    placed.time.frameMap,
    { fps, segmentSeconds: o.rule.segmentSeconds },
    o.framesPerSegment ?? FRAMES_PER_SEGMENT,
  );
  o.onProgress?.('align', 2, 2);
  const { rect, activeP, tone } = placed;
  // A leak shown whole (re-encoded, rescaled, re-timed) is placed exactly by its rectangle; any
  // other one is placed frame by frame as well (measured on a 60-s 640×360 film: a 5% off-centre
  // crop read |z| 5.5–8 with one map for the leak and 8.6–11.6 with each frame's own; a handheld
  // camcorder copy 0.4–2.9 and 3.7–5.8).
  const shownWhole = placed.geometryScore >= 0.999 && !placed.projective && box(rect) === `${W}x${H}+0+0`;
  const placement: LeakPlacement = {
    active: activeP,
    map: placed.map,
    inside: insetRect(rect, 2, W, H),
    tone,
    perFrame: !shownWhole,
  };
  const scoring = { reference, leak: timed.sampled, W, H, fps, params, chosen, frameMap: placed.time.frameMap };
  const scores = await scoreSegments(o, { ...scoring, placement });
  const segments = readSegments(o, scores, patternLength(W, H, params), (index) =>
    timed.seconds(bySegment.get(index) ?? []),
  );
  return { timed, placed, segments, aligned };
}

/** How many readings were placed and scored, and what each part of the detection spent (seconds). */
interface Effort {
  tried: number;
  seconds: LineUpSeconds & { readings: number };
}

function detectionOf(o: VideoDetectOptions, r: OrientedReading, fps: number, effort: Effort): Detection {
  const { timed, placed, segments, aligned } = r;
  const { tried: readingsTried, seconds } = effort;
  return {
    segments,
    bits: readOut(segments, o.rule),
    alignment: {
      offsetSeconds: placed.time.offset / fps,
      timeCorrelation: round3(placed.time.correlation),
      rect: box(placed.rect),
      geometryScore: round3(placed.geometryScore),
      activeArea: box(placed.active),
      // Counted on the samples: each stands for the leak's frames up to the next one.
      matchedFrames: Math.round(timed.seconds(aligned) * fps),
      leakFrames: Math.round(timed.seconds([...placed.time.frameMap.keys()]) * fps),
      ...(timed.window && { filmWindow: box(timed.window) }),
      ...(timed.mirror !== 'none' && { mirrored: timed.mirror }),
      ...(placed.projective && { shownCorners: shownCorners(placed) }),
      ...(readingsTried > 1 && { readingsTried }),
      // What each choice cost: the window searches run only where the whole frame matches below 0.9, a second decode
      // only through a film window, and every reading tried is placed and scored.
      decodeSeconds: round1(seconds.decode),
      lineUpSeconds: round1(seconds.lineUp),
      windowSearchSeconds: round1(seconds.windowSearch),
      ...(seconds.windowDecode !== undefined && { windowDecodeSeconds: round1(seconds.windowDecode) }),
      readingSeconds: round1(seconds.readings),
    },
  };
}

/** Where the leak's picture corners fall in the original (reference plane pixels), clockwise from the top left. */
function shownCorners(placed: { map: Homography; activeP: Rect }): string {
  return corners(invert(placed.map), placed.activeP)
    .map((p) => (p ? `${p[0].toFixed(1)},${p[1].toFixed(1)}` : 'none'))
    .join(' ');
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;
const round1 = (v: number) => Math.round(v * 10) / 10;

/** A rectangle as ffmpeg writes a crop: 1280x720+0+0, in whole pixels. */
const box = (r: Rect) => `${Math.round(r.w)}x${Math.round(r.h)}+${Math.round(r.x)}+${Math.round(r.y)}`;
