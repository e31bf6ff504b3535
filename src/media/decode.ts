import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from './binaries.js';
import { lastLine, startMedia } from './spawn.js';

/** A time range of the input, in seconds; both optional. */
export interface Range {
  start?: number;
  duration?: number;
}

const rangeArgs = (r: Range) => [
  ...(r.start !== undefined ? ['-ss', String(r.start)] : []),
  ...(r.duration !== undefined ? ['-t', String(r.duration)] : []),
];

/**
 * Cuts a byte stream into fixed-size records, each its own buffer (a consumer may keep or transfer
 * it); a last short record is yielded as it is. The consumer pulls, so the producer is held back
 * by its pipe: never more than a record or two ahead.
 */
export async function* fixedRecords(stream: AsyncIterable<Buffer>, size: number): AsyncGenerator<Uint8Array> {
  let pending = new Uint8Array(size);
  let filled = 0;
  for await (const chunk of stream) {
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(size - filled, chunk.length - offset);
      pending.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (filled === size) {
        yield pending;
        pending = new Uint8Array(size);
        filled = 0;
      }
    }
  }
  if (filled > 0) yield pending.subarray(0, filled);
}

/**
 * Fixed-size records from a process's stdout (fixedRecords): a whole film never sits in memory.
 * A decoder that fails is an error naming `what`; one the consumer leaves early is killed.
 */
async function* records(
  bin: string,
  args: string[],
  size: number,
  what: string,
  signal?: AbortSignal,
): AsyncGenerator<Uint8Array> {
  const p = startMedia(bin, args, signal);
  let finished = false;
  try {
    let last: Uint8Array | undefined;
    // Hold back the last record until the exit code says the stream was whole.
    for await (const record of fixedRecords(p.child.stdout as AsyncIterable<Buffer>, size)) {
      if (record.length < size) last = record;
      else yield record;
    }
    const { code, signal: killed, stderr } = await p.done;
    finished = true;
    if (killed === null && code !== 0) throw new DrmError('BAD_REQUEST', `could not decode ${what}: ${lastLine(stderr)}`);
    if (last) yield last;
  } finally {
    // The consumer stopped early (break, error): stop ffmpeg instead of leaving it blocked on the pipe.
    if (!finished) {
      p.child.kill('SIGKILL');
      await p.done.catch(() => undefined);
    }
  }
}

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

function frameChain(o: FrameOptions, format: string): string[] {
  const select = o.select ? [`select=${o.select.map((n) => `eq(n\\,${n})`).join('+')}`] : [];
  return [...(o.geometry ?? [`scale=${o.width}:${o.height}:flags=bicubic`]), ...(o.fps ? [`fps=${o.fps}`] : []), ...select, `format=${format}`];
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
  return { args: ['-map', '0:v:0', '-filter_script:v', script, ...vsync, ...raw], cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
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
export async function lumaFrameAt(bins: MediaBinaries, file: string, index: number, o: { width: number; height: number; fps: number; signal?: AbortSignal }): Promise<Uint8Array | undefined> {
  const start = Math.max(0, (index - 0.5) / o.fps);
  const args = ['-v', 'error', '-ss', start.toFixed(6), '-i', file, '-map', '0:v:0', '-frames:v', '1', '-vf', `scale=${o.width}:${o.height}:flags=bicubic,format=gray`, '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1'];
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
export async function* preciseLumaFrames(bins: MediaBinaries, file: string, o: FrameOptions): AsyncGenerator<Float32Array> {
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

export interface VideoSamplingOptions extends Range {
  /** proxies are written at this frame rate, one sample a frame (proxy frame k is sample k) */
  fps: number;
  /** a decoded frame is kept when it comes at least this many seconds after the last one kept */
  spacing: number;
  /**
   * Leave the frames that no other frame refers to undecoded (ffmpeg's skip_frame noref): the
   * others decode exactly as they would have, and in an x264 film these are half the frames and
   * a third of the decoding time. The samples are then taken among the frames that stay, wherever
   * they fall (`times` says where). Skipping every B-frame would save more, but x264's reference
   * B-frames feed the P-frames after them: those came out wrong, more so up to the next keyframe.
   */
  skipNonReference?: boolean;
  /**
   * each kept frame area-scaled to width × height, into `file` (10-bit grey MP4, x264 tuned for
   * decoding: measured per minute of a 1080p leak, 0.9 → 0.6 s of CPU to read it back and 2.5 →
   * 2.3 s to write it, for a file 15% larger)
   */
  proxy: { width: number; height: number; file: string };
  /** each kept frame's thumbnail (scaled from its proxy picture) */
  thumb: { width: number; height: number };
  /** called with the number of samples so far */
  onSample?: (count: number) => void;
  signal?: AbortSignal;
}

export interface VideoSamples {
  /** one thumbnail per sample */
  thumbs: Uint8Array[];
  /**
   * each sample's time in seconds from the start of the file (where its first frame is, or a
   * little before): a range's samples are timed on the same clock as the whole file's
   */
  times: Float64Array;
}

/**
 * One decode of a (long) video for the watermark detector, keeping a frame every `spacing`
 * seconds: a proxy of it written to a file at the size the mark is read at, in 10 bits so the
 * box average keeps its fraction, a small 8-bit thumbnail of it, and its time. Decoding a 1080p
 * film is the cost that matters: only the kept frames are scaled (measured: scaling every frame
 * for thumbnails cost the decode a fifth more), and the detector then reads the small proxy file
 * as often as it needs instead of decoding the film again.
 */
export async function sampleVideo(bins: MediaBinaries, file: string, o: VideoSamplingOptions): Promise<VideoSamples> {
  const { thumb, proxy } = o;
  // The kept frames' times come back in a frame log (ffmpeg's framecrc) beside the proxy.
  const log = `${proxy.file}.frames.txt`;
  const graph = [
    `[0:v:0]select=isnan(prev_selected_t)+gte(t-prev_selected_t\\,${o.spacing}),scale=${proxy.width}:${proxy.height}:flags=area,format=gray10le,split=3[p][t][l]`,
    // Proxy frame k at k/fps, so that it can be found again by seeking (an fps filter here would
    // repeat the last frame up to the leak's end; the output's rate is set instead).
    `[p]setpts=N/(${o.fps}*TB)[proxy]`,
    `[t]scale=${thumb.width}:${thumb.height}:flags=bicubic,format=gray[thumbs]`,
    `[l]scale=2:2,format=gray[log]`,
  ].join(';');
  const args = [
    '-v', 'error', '-y', ...(o.skipNonReference ? ['-skip_frame', 'noref'] : []), ...rangeArgs(o), '-i', file, '-filter_complex', graph,
    // Every kept frame once, on its own time (not repeated to fill a constant rate).
    '-vsync', '0',
    '-map', '[thumbs]', '-f', 'rawvideo', '-pix_fmt', 'gray', 'pipe:1',
    '-map', '[proxy]', '-r', String(o.fps), '-c:v', 'libx264', '-preset', 'superfast', '-tune', 'fastdecode', '-crf', '12', '-pix_fmt', 'gray10le', '-f', 'mp4', proxy.file,
    '-map', '[log]', '-enc_time_base', '-1', '-f', 'framecrc', log,
  ];
  try {
    const thumbs: Uint8Array[] = [];
    for await (const frame of records(bins.ffmpeg, args, thumb.width * thumb.height, `the video of ${file}`, o.signal)) {
      if (frame.length !== thumb.width * thumb.height) continue;
      thumbs.push(frame);
      o.onSample?.(thumbs.length);
    }
    // ffmpeg counts a range's output time from the range's start.
    const times = frameLogTimes(fs.readFileSync(log, 'utf8')).map((t) => t + (o.start ?? 0));
    if (times.length !== thumbs.length) throw new DrmError('INTERNAL_ERROR', `sampling ${file}: ${thumbs.length} thumbnails but ${times.length} frame times`);
    return { thumbs, times };
  } finally {
    fs.rmSync(log, { force: true });
  }
}

/** The frame times of an ffmpeg framecrc log, in seconds. */
export function frameLogTimes(text: string): Float64Array {
  const tb = /^#tb 0: (\d+)\/(\d+)$/m.exec(text);
  if (!tb) throw new DrmError('INTERNAL_ERROR', 'a frame log without its time base');
  const unit = Number(tb[1]) / Number(tb[2]);
  const pts = text
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('#'))
    .map((line) => Number(line.split(',')[2]));
  return Float64Array.from(pts, (p) => p * unit);
}

/**
 * Whole yuv420p pictures (luma first, so the watermark can work on subarray(0, width·height) in
 * place and the chroma passes through untouched), for re-encoding a marked copy.
 */
export async function* yuvFrames(bins: MediaBinaries, file: string, o: FrameOptions): AsyncGenerator<Uint8Array> {
  const size = yuv420Size(o.width, o.height);
  const args = ['-v', 'error', '-y', ...rangeArgs(o), '-i', file, ...frameOutputs(o, 'yuv420p').args];
  for await (const frame of records(bins.ffmpeg, args, size, `the video of ${file}`, o.signal)) {
    if (frame.length === size) yield frame;
  }
}

export interface PcmOptions extends Range {
  sampleRate: number;
  /** samples per yielded block */
  blockSize?: number;
  signal?: AbortSignal;
}

/** The audio mixed down to mono float samples at sampleRate, in blocks. */
export async function* monoPcm(bins: MediaBinaries, file: string, o: PcmOptions): AsyncGenerator<Float32Array> {
  const block = o.blockSize ?? 65_536;
  const args = ['-v', 'error', ...rangeArgs(o), '-i', file, '-map', '0:a:0', '-ac', '1', '-ar', String(o.sampleRate), '-f', 'f32le', 'pipe:1'];
  for await (const bytes of records(bins.ffmpeg, args, block * 4, `the audio of ${file}`, o.signal)) {
    yield new Float32Array(bytes.buffer, bytes.byteOffset, Math.floor(bytes.length / 4));
  }
}

/** A whole (short) range of audio as one array: for a 10-s segment, not for a film. */
export async function readMonoPcm(bins: MediaBinaries, file: string, o: PcmOptions): Promise<Float32Array> {
  const blocks: Float32Array[] = [];
  for await (const b of monoPcm(bins, file, o)) blocks.push(b);
  return concatSamples(blocks);
}

/** Pieces of samples joined into one array. */
export function concatSamples(pieces: readonly Float32Array[], length = pieces.reduce((n, p) => n + p.length, 0)): Float32Array {
  const out = new Float32Array(length);
  let at = 0;
  for (const p of pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
