import { createDecipheriv } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Context } from '../../context.js';
import type { ContentRow } from '../../db/repos/index.js';
import { DrmError } from '../../errors.js';
import { jpegStill } from '../../media/stills.js';
import type { SegmentReading } from '../../watermark/segments.js';
import { contentKey } from '../streaming.js';
import { segmentName } from '../../storage/content-store.js';

/** A picture of the leak and the picture of the original it was lined up with, for the evidence report. */
export interface FramePair {
  /** the segment of the original both fall in */
  segment: number;
  leakSeconds: number;
  originalSeconds: number;
  /** data: URIs of small JPEGs */
  leak: string;
  original: string;
}

/**
 * Three pairs show the alignment holds at the start, the middle and the end without weighing much (about 15 KB each
 * inline).
 */
const PAIRS = 3;
const WIDTH = 320;
/** Longer than the keyframe interval of the segments ingest writes (10 s) and of most encoders' defaults. */
const TS_PREROLL = 12;
/** A segment the leak covers for less than this shows a picture at its very edge: not worth one. */
const MIN_COVERAGE = 1;

export interface AlignedTime {
  segment: number;
  originalSeconds: number;
  leakSeconds: number;
}

/**
 * Where to take the pictures: a few segments the leak covers, spread over it (first, middle,
 * last), each at the middle of the part the leak holds. `offset` is where the leak's first
 * frame falls in the original (the detector's alignment), `starts` every segment's start there.
 */
export function alignedTimes(
  segments: readonly SegmentReading[],
  offset: number,
  leakDuration: number,
  starts: readonly number[],
): AlignedTime[] {
  const covered = segments
    .filter((s) => s.coverage >= MIN_COVERAGE && s.index < starts.length)
    .sort((a, b) => a.index - b.index);
  const k = Math.min(PAIRS, covered.length);
  const picked = [
    ...new Set(Array.from({ length: k }, (_, i) => (k === 1 ? 0 : Math.round((i * (covered.length - 1)) / (k - 1))))),
  ];
  const times: AlignedTime[] = [];
  for (const at of picked) {
    const segment = (covered[at] as SegmentReading).index;
    const start = Math.max(starts[segment] as number, offset);
    const end = Math.min(starts[segment + 1] ?? Number.POSITIVE_INFINITY, offset + leakDuration);
    if (end - start < MIN_COVERAGE / 2) continue;
    const originalSeconds = (start + end) / 2;
    times.push({ segment, originalSeconds, leakSeconds: originalSeconds - offset });
  }
  return times;
}

/** Each segment's start in the original, from the durations of the playlist ingest wrote. */
async function segmentStarts(ctx: Context, content: ContentRow): Promise<number[]> {
  const starts: number[] = [];
  let t = 0;
  for (const s of await ctx.storage.segments(content.storagePath as string, 'a')) {
    starts.push(t);
    t += s.duration;
  }
  return starts;
}

/** Segment n of variant A, decrypted as a player does (AES-128-CBC, IV = the sequence number), into `file`. */
async function decryptSegment(ctx: Context, content: ContentRow, n: number, file: string): Promise<void> {
  const iv = Buffer.alloc(16);
  iv.writeUInt32BE(n, 12);
  const d = createDecipheriv('aes-128-cbc', contentKey(ctx, content), iv);
  const sealed = await ctx.storage.read(content.storagePath as string, segmentName('a', n));
  fs.writeFileSync(file, Buffer.concat([d.update(sealed), d.final()]));
}

const dataUri = (jpeg: Buffer) => `data:image/jpeg;base64,${jpeg.toString('base64')}`;

/**
 * Pictures of a video leak beside the original's at the same moments, as the detector lined them
 * up. The original is variant A as ingest packaged it: in colour and at full size, unlike the
 * grey, reduced reference the detector reads (the two variants differ only by the mark).
 */
export async function alignedFrames(
  ctx: Context,
  leak: string,
  content: ContentRow,
  found: { segments: readonly SegmentReading[]; offsetSeconds: number; leakDuration: number; leakFormat: string },
  signal?: AbortSignal,
): Promise<FramePair[]> {
  if (!content.storagePath) throw new DrmError('CONFLICT', 'the content has no packaged segments');
  const starts = await segmentStarts(ctx, content);
  const times = alignedTimes(found.segments, found.offsetSeconds, found.leakDuration, starts);
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-frames-'));
  try {
    const pairs: FramePair[] = [];
    for (const t of times) {
      const segment = path.join(work, `${t.segment}.ts`);
      await decryptSegment(ctx, content, t.segment, segment);
      const preroll = found.leakFormat.includes('mpegts') ? TS_PREROLL : 0;
      const leakJpeg = await jpegStill(ctx.media, leak, t.leakSeconds, { width: WIDTH, preroll, signal });
      // A segment is short: decoded from its start.
      const within = t.originalSeconds - (starts[t.segment] as number);
      const originalJpeg = await jpegStill(ctx.media, segment, within, { width: WIDTH, preroll: within, signal });
      pairs.push({ ...t, leak: dataUri(leakJpeg), original: dataUri(originalJpeg) });
    }
    return pairs;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
