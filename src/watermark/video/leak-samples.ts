import path from 'node:path';
import type { MediaBinaries } from '../../media/binaries.js';
import { lumaFrameAt, preciseLumaFrames } from '../../media/video-frames.js';
import { sampleVideo, type VideoSamples } from '../../media/video-samples.js';

/**
 * A leak's samples for the video detector (./detect.ts): a frame every few, each as a
 * thumbnail, a proxy at the reference plane's size and its time. The leak is decoded once, in
 * `parts` consecutive time ranges at the same time: decoding without the unreferenced frames
 * leaves ffmpeg's frame threads too little to overlap (1.4 of 2 cores busy), and two ranges at
 * once took 6.2 s where one took 8.6 s for a minute of 1080p.
 */
export interface LeakSamples {
  thumbs: Uint8Array[];
  /** each sample's time in seconds after the first sample */
  times: Float64Array;
  /** sample k's proxy picture, found by seeking (8-bit luma) */
  proxyAt(
    k: number,
    o: { width: number; height: number; fps: number; signal?: AbortSignal },
  ): Promise<Uint8Array | undefined>;
  /** the proxy pictures of `samples` (ascending), in that order, as precise luma */
  proxies(
    samples: readonly number[],
    o: { width: number; height: number; signal?: AbortSignal },
  ): AsyncGenerator<Float32Array>;
}

export interface LeakSamplingOptions {
  /** the leak's length in seconds (its container's), to cut it into parts */
  duration: number;
  /** ranges decoded at the same time; a short leak is decoded whole */
  parts: number;
  fps: number;
  /** the shortest time between two samples */
  spacing: number;
  skipNonReference: boolean;
  thumb: { width: number; height: number };
  proxy: { width: number; height: number };
  /** where the proxy files go, and what their names begin with (leak by default) */
  dir: string;
  name?: string;
  /** only this part of the leak's frame (whole leak pixels, even sizes) */
  crop?: { x: number; y: number; w: number; h: number };
  onSample?: (count: number) => void;
  signal?: AbortSignal;
}

/**
 * No part is shorter: a short leak would save a second or two and pay a second seek and process (not measured below
 * this).
 */
const SHORTEST_PART = 30;

interface Part {
  file: string;
  /** the first sample of the whole leak that this part holds */
  start: number;
  /** how many samples of the whole leak it holds */
  count: number;
  /** its own frames before `start` (a frame at the boundary that the previous part kept) */
  skip: number;
}

export async function sampleLeak(bins: MediaBinaries, leak: string, o: LeakSamplingOptions): Promise<LeakSamples> {
  const n = Math.max(1, Math.min(o.parts, Math.floor(o.duration / SHORTEST_PART)));
  const length = o.duration / n;
  const counts = new Array<number>(n).fill(0);
  const files = Array.from({ length: n }, (_, p) => path.join(o.dir, `${o.name ?? 'leak'}-proxy-${p}.mp4`));
  const sampled = await Promise.all(
    files.map((file, p) =>
      sampleVideo(bins, leak, {
        ...(p > 0 && { start: p * length }),
        ...(p < n - 1 && { duration: length }),
        fps: o.fps,
        spacing: o.spacing,
        skipNonReference: o.skipNonReference,
        thumb: o.thumb,
        ...(o.crop && { crop: o.crop }),
        proxy: { ...o.proxy, file },
        signal: o.signal,
        onSample: (count) => {
          counts[p] = count;
          o.onSample?.(counts.reduce((a, b) => a + b, 0));
        },
      }),
    ),
  );
  const { thumbs, times, parts } = joinParts(sampled, files);
  const partOf = (k: number): { file: string; index: number } => {
    const part = parts.find((q) => k >= q.start && k < q.start + q.count);
    if (!part) throw new RangeError(`the leak has no sample ${k}`);
    return { file: part.file, index: part.skip + k - part.start };
  };
  return {
    thumbs,
    times,
    proxyAt: (k, f) => {
      const { file, index } = partOf(k);
      return lumaFrameAt(bins, file, index, f);
    },
    proxies: async function* (samples, f) {
      for (const part of parts) {
        const select = samples
          .filter((k) => k >= part.start && k < part.start + part.count)
          .map((k) => part.skip + k - part.start);
        if (select.length > 0) yield* preciseLumaFrames(bins, part.file, { ...f, select });
      }
    },
  };
}

/**
 * The parts' samples as one run, timed from the first. A frame at a boundary that both parts
 * decoded is kept once (by the earlier part); the proxy frames stay in their parts' files.
 */
function joinParts(
  sampled: readonly VideoSamples[],
  files: readonly string[],
): { thumbs: Uint8Array[]; times: Float64Array; parts: Part[] } {
  const thumbs: Uint8Array[] = [];
  const times: number[] = [];
  const parts: Part[] = [];
  for (const [p, s] of sampled.entries()) {
    const last = times.length > 0 ? (times[times.length - 1] as number) : Number.NEGATIVE_INFINITY;
    let skip = 0;
    while (skip < s.times.length && (s.times[skip] as number) <= last + 1e-6) skip++;
    parts.push({ file: files[p] as string, start: thumbs.length, count: s.times.length - skip, skip });
    for (let k = skip; k < s.times.length; k++) {
      thumbs.push(s.thumbs[k] as Uint8Array);
      times.push(s.times[k] as number);
    }
  }
  const t0 = times[0] ?? 0;
  return { thumbs, times: Float64Array.from(times, (t) => t - t0), parts };
}
