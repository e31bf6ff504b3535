import path from 'node:path';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from './binaries.js';
import { HLS_SEGMENT_SECONDS } from './hls.js';
import type { MediaInfo } from './probe.js';
import { startMedia } from './spawn.js';

/** How far the packets of a file could be read, and what the demuxer complained of on the way. */
export interface PacketRead {
  /** the last timestamp read, in seconds on the file's own clock; null when no packet was read */
  end: number | null;
  /** ffmpeg's error lines, without the demuxer's address prefix or the file's full path */
  errors: string[];
}

/**
 * Reads the audio and video packets of a file from `from` seconds (after its first timestamp) to
 * its end without decoding them: a stream copy into the null muxer costs little more than reading
 * the bytes. -copyts keeps the file's own timestamps, so the end is comparable with what its
 * container states whether or not the seek found anything to read.
 */
export async function readPackets(
  bins: MediaBinaries,
  file: string,
  from: number,
  signal?: AbortSignal,
  decode = false,
): Promise<PacketRead> {
  const seek = from > 0 ? ['-ss', from.toFixed(3)] : [];
  const args = ['-hide_banner', '-nostats', '-v', 'error', '-progress', 'pipe:1', ...seek, '-copyts', '-i', file];
  const copy = decode ? [] : ['-c', 'copy'];
  const p = startMedia(bins.ffmpeg, [...args, '-map', '0:v?', '-map', '0:a?', ...copy, '-f', 'null', '-'], signal);
  let progress = '';
  p.child.stdout.setEncoding('utf8').on('data', (d: string) => {
    progress = (progress + d).slice(-2000);
  });
  const { code, stderr } = await p.done;
  signal?.throwIfAborted();
  const errors = stderr
    .split('\n')
    .map((l) =>
      l
        .replace(/^\[[^\]]* @ 0x[0-9a-f]+\]\s*/, '')
        .replaceAll(file, path.basename(file))
        .trim(),
    )
    .filter((l) => l && !l.startsWith('Last message repeated'));
  if (code !== 0 && errors.length === 0) errors.push(`ffmpeg exited with code ${code}`);
  // The last progress block is the end of the read; no packet at all leaves 0 (N/A in newer builds).
  const us = [...progress.matchAll(/^out_time_us=(-?\d+)$/gm)].at(-1)?.[1];
  const end = us === undefined || Number(us) === 0 ? null : Number(us) / 1e6;
  return { end, errors };
}

/**
 * Refuses a source cut short or damaged before anyone pays for it: a file cut with `head -c`
 * keeps a container that states its whole duration (an MP4 with its index at the front), and
 * ffmpeg packages what is left with exit 0. Only the last segment's worth is read first; a
 * source that reads to within a segment of its stated end without an error passes on that. Any
 * doubt is settled by reading the whole file once, which also says how much of it there is.
 * A container that states no duration is not refused here for that alone.
 *
 * With `decode` (a source someone pays a fee for) the whole file is decoded instead, once: damage
 * inside packets that read cleanly shows only there. That costs about a ninth of a plain
 * transcode (1080p: 2.2 s against 19.5 s for 30 s), so it is kept for the ingests that charge.
 */
export async function checkSourceIntact(
  bins: MediaBinaries,
  file: string,
  info: MediaInfo,
  signal?: AbortSignal,
  decode = false,
): Promise<void> {
  if (!(info.duration > 0)) return;
  const start = info.start ?? 0;
  const readsTo = (r: PacketRead) => (r.end === null ? 0 : r.end - start);
  const whole = (r: PacketRead) => r.errors.length === 0 && readsTo(r) >= info.duration - HLS_SEGMENT_SECONDS;
  const tail = Math.max(0, info.duration - HLS_SEGMENT_SECONDS);
  if (!decode && whole(await readPackets(bins, file, tail, signal))) return;
  const all = await readPackets(bins, file, 0, signal, decode);
  if (whole(all)) return;
  const [stated, read] = [info.duration.toFixed(1), readsTo(all).toFixed(1)];
  const why = all.errors[0] ? ` (ffmpeg: ${all.errors[0]})` : '';
  // Damage in the middle of a file that reads to its end leaves no shortfall to state.
  const what =
    Number(read) < Number(stated)
      ? `the container says ${stated} s but only ${read} s can be read`
      : `ffmpeg reports errors ${decode ? 'decoding' : 'reading'} it`;
  throw new DrmError('BAD_REQUEST', `${path.basename(file)}: the source is truncated or damaged: ${what}${why}`);
}
