import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MediaBinaries } from './binaries.js';
import { type Range, type RecordMemory, rangeArgs, records } from './records.js';

export interface FrameOptions extends Range {
  width: number;
  height: number;
  /** resample to this frame rate (frames dropped or repeated); the source rate when omitted */
  fps?: number;
  /**
   * ffmpeg filters that bring the picture to width × height, instead of a plain scale: the
   * detector's crop, scale and pad that put a leak back into the original's geometry.
   */
  geometry?: string[];
  /** only these frame numbers (counted after the frame-rate change), for sampling a few pictures */
  select?: readonly number[];
  /**
   * More outputs of the same decode: the frames (after the scale and frame-rate change) through
   * each one's `filters`, written with its `args` (output options, the file last). One decode then
   * feeds them all.
   */
  sideOutputs?: readonly VideoOutput[];
  signal?: AbortSignal;
}

/** yuvFrames' options: where each frame is written (a pool that reuses them), new memory by default. */
export interface YuvFrameOptions extends FrameOptions {
  memory?: RecordMemory;
}

function frameChain(o: FrameOptions, format: string): string[] {
  const select = o.select ? [`select=${o.select.map((n) => `eq(n\\,${n})`).join('+')}`] : [];
  return [
    ...(o.geometry ?? [`scale=${o.width}:${o.height}:flags=bicubic`]),
    ...(o.fps ? [`fps=${o.fps}`] : []),
    ...select,
    `format=${format}`,
  ];
}

/**
 * Past this length a filter chain goes to ffmpeg in a file: the frames a detector selects from a
 * long film make an expression of hundreds of kilobytes, over what one argument may hold (128 KiB).
 */
const LONGEST_FILTER_ARG = 16_384;

export interface VideoOutput {
  /** filters from the shared picture to this output's ('null' when empty) */
  filters: string[];
  /** output options, the file last */
  args: string[];
}

/**
 * ffmpeg arguments for one decode of the first video stream into several outputs: `head` (filters
 * every output shares) once, then a split, then each output's own filters and options.
 */
export function splitOutputs(head: readonly string[], outputs: readonly VideoOutput[]): string[] {
  const labels = outputs.map((_, k) => `[s${k}]`).join('');
  const graph = [
    `[0:v:0]${[...head, `split=${outputs.length}`].join(',')}${labels}`,
    ...outputs.map((out, k) => `[s${k}]${out.filters.length > 0 ? out.filters.join(',') : 'null'}[o${k}]`),
  ].join(';');
  return ['-filter_complex', graph, ...outputs.flatMap((out, k) => ['-map', `[o${k}]`, ...out.args])];
}

/** The filters and output options up to the raw frames on stdout, and any side output after them. */
function frameOutputs(o: FrameOptions, format: string): { args: string[]; cleanup?: () => void } {
  const chain = frameChain(o, format).join(',');
  // Without passthrough, ffmpeg would repeat selected frames to fill the gaps between them.
  const vsync = o.select ? ['-vsync', '0'] : [];
  const raw = ['-f', 'rawvideo', '-pix_fmt', format, 'pipe:1'];
  const sides = o.sideOutputs ?? [];
  if (sides.length > 0) return { args: splitOutputs([chain], [{ filters: [], args: [...vsync, ...raw] }, ...sides]) };
  if (chain.length <= LONGEST_FILTER_ARG) return { args: ['-map', '0:v:0', '-vf', chain, ...vsync, ...raw] };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-filter-'));
  const script = path.join(dir, 'filters.txt');
  fs.writeFileSync(script, chain);
  return {
    args: ['-map', '0:v:0', '-filter_script:v', script, ...vsync, ...raw],
    cleanup: () => fs.rmSync(dir, { recursive: true, force: true }),
  };
}

/** Bytes of one yuv420p picture: full-size luma, then two chroma planes of half size rounded up. */
export function yuv420Size(width: number, height: number): number {
  return width * height + 2 * Math.ceil(width / 2) * Math.ceil(height / 2);
}

/**
 * The luma (Y, 8-bit) of every video frame, scaled to width × height, one Uint8Array of
 * width·height bytes per frame in display order. Luma is all the watermark reads and writes.
 */
export async function* lumaFrames(bins: MediaBinaries, file: string, o: FrameOptions): AsyncGenerator<Uint8Array> {
  const out = frameOutputs(o, 'gray');
  try {
    const args = ['-v', 'error', ...rangeArgs(o), '-i', file, ...out.args];
    for await (const frame of records(bins.ffmpeg, args, o.width * o.height, `the video of ${file}`, o.signal)) {
      if (frame.length === o.width * o.height) yield frame;
    }
  } finally {
    out.cleanup?.();
  }
}

/**
 * One frame's luma (8-bit, width × height) by its number at a constant `fps`, found by seeking: a
 * few pictures out of a long file without decoding all of it. For MP4 files whose frames sit on
 * that rate from time 0 (a detection reference, a leak's proxy); ffmpeg decodes from the keyframe
 * before and hands out the first frame at or after half a frame before the one asked for.
 */
export async function lumaFrameAt(
  bins: MediaBinaries,
  file: string,
  index: number,
  o: { width: number; height: number; fps: number; signal?: AbortSignal },
): Promise<Uint8Array | undefined> {
  const start = Math.max(0, (index - 0.5) / o.fps);
  const args = [
    '-v',
    'error',
    '-ss',
    start.toFixed(6),
    '-i',
    file,
    '-map',
    '0:v:0',
    '-frames:v',
    '1',
    '-vf',
    `scale=${o.width}:${o.height}:flags=bicubic,format=gray`,
    '-f',
    'rawvideo',
    '-pix_fmt',
    'gray',
    'pipe:1',
  ];
  for await (const frame of records(bins.ffmpeg, args, o.width * o.height, `frame ${index} of ${file}`, o.signal)) {
    if (frame.length === o.width * o.height) return frame;
  }
  return undefined;
}

/**
 * The luma as floats in grey levels with the fraction kept (ffmpeg's 16-bit grey, divided by
 * 256): for planes so small that 8-bit rounding would be noise beside what is measured on them,
 * such as a film reduced 4× for the watermark detector, or a 10-bit reference.
 */
export async function* preciseLumaFrames(
  bins: MediaBinaries,
  file: string,
  o: FrameOptions,
): AsyncGenerator<Float32Array> {
  const out = frameOutputs(o, 'gray16le');
  const pixels = o.width * o.height;
  try {
    const args = ['-v', 'error', ...rangeArgs(o), '-i', file, ...out.args];
    for await (const frame of records(bins.ffmpeg, args, 2 * pixels, `the video of ${file}`, o.signal)) {
      if (frame.length !== 2 * pixels) continue;
      const words = new Uint16Array(frame.buffer, frame.byteOffset, pixels);
      const luma = new Float32Array(pixels);
      for (let i = 0; i < pixels; i++) luma[i] = (words[i] as number) / 256;
      yield luma;
    }
  } finally {
    out.cleanup?.();
  }
}

/**
 * Whole yuv420p pictures (luma first, so the watermark can work on subarray(0, width·height) in
 * place and the chroma passes through untouched), for re-encoding a marked copy.
 */
export async function* yuvFrames(bins: MediaBinaries, file: string, o: YuvFrameOptions): AsyncGenerator<Uint8Array> {
  const size = yuv420Size(o.width, o.height);
  // One decoding thread: the frames go to x264 encodes that are each many times slower than it, so
  // more threads would only add frame threading's own cost (14% of a 1080p decode's CPU, measured).
  const decoder = ['-threads', '1'];
  const args = ['-v', 'error', '-y', ...rangeArgs(o), ...decoder, '-i', file, ...frameOutputs(o, 'yuv420p').args];
  for await (const frame of records(bins.ffmpeg, args, size, `the video of ${file}`, o.signal, o.memory)) {
    if (frame.length === size) yield frame;
  }
}
