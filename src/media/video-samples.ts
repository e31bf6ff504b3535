import fs from 'node:fs';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from './binaries.js';
import { type Range, rangeArgs, records } from './records.js';

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
  /** only this part of each frame (whole pixels), cut before scaling */
  crop?: { x: number; y: number; w: number; h: number };
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
  const args = samplingArgs(file, o, log);
  try {
    const thumbs: Uint8Array[] = [];
    for await (const frame of records(
      bins.ffmpeg,
      args,
      thumb.width * thumb.height,
      `the video of ${file}`,
      o.signal,
    )) {
      if (frame.length !== thumb.width * thumb.height) continue;
      thumbs.push(frame);
      o.onSample?.(thumbs.length);
    }
    // ffmpeg counts a range's output time from the range's start.
    const times = frameLogTimes(fs.readFileSync(log, 'utf8')).map((t) => t + (o.start ?? 0));
    if (times.length !== thumbs.length)
      throw new DrmError(
        'INTERNAL_ERROR',
        `sampling ${file}: ${thumbs.length} thumbnails but ${times.length} frame times`,
      );
    return { thumbs, times };
  } finally {
    fs.rmSync(log, { force: true });
  }
}

/**
 * ffmpeg's arguments for one sampling pass: the kept frames' proxy file, their thumbnails on stdout, their times in
 * `log`.
 */
function samplingArgs(file: string, o: VideoSamplingOptions, log: string): string[] {
  const { thumb, proxy, crop } = o;
  // exact: the window may start on an odd pixel (the chroma, which is left out, is only approximated there).
  const cut = crop ? `crop=${crop.w}:${crop.h}:${crop.x}:${crop.y}:exact=1,` : '';
  const graph = [
    `[0:v:0]select=isnan(prev_selected_t)+gte(t-prev_selected_t\\,${o.spacing}),${cut}` +
      `scale=${proxy.width}:${proxy.height}:flags=area,format=gray10le,split=3[p][t][l]`,
    // Proxy frame k at k/fps, so that it can be found again by seeking (an fps filter here would
    // repeat the last frame up to the leak's end; the output's rate is set instead).
    `[p]setpts=N/(${o.fps}*TB)[proxy]`,
    `[t]scale=${thumb.width}:${thumb.height}:flags=bicubic,format=gray[thumbs]`,
    `[l]scale=2:2,format=gray[log]`,
  ].join(';');
  return [
    '-v',
    'error',
    '-y',
    ...(o.skipNonReference ? ['-skip_frame', 'noref'] : []),
    ...rangeArgs(o),
    '-i',
    file,
    '-filter_complex',
    graph,
    // Every kept frame once, on its own time (not repeated to fill a constant rate).
    '-vsync',
    '0',
    '-map',
    '[thumbs]',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'gray',
    'pipe:1',
    '-map',
    '[proxy]',
    '-r',
    String(o.fps),
    '-c:v',
    'libx264',
    '-preset',
    'superfast',
    '-tune',
    'fastdecode',
    '-crf',
    '12',
    '-pix_fmt',
    'gray10le',
    '-f',
    'mp4',
    proxy.file,
    '-map',
    '[log]',
    '-enc_time_base',
    '-1',
    '-f',
    'framecrc',
    log,
  ];
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
