import path from 'node:path';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from './binaries.js';
import { lastLine, startMedia } from './spawn.js';

export interface MediaInfo {
  /** seconds */
  duration: number;
  /**
   * seconds: the first timestamp, where ffprobe states one (MPEG-TS seldom starts at 0; the
   * ffmpeg report that stands in for ffprobe on .ts leaves it out, and 0 is assumed)
   */
  start?: number;
  formatName: string;
  video?: { codec: string; width: number; height: number; fps: number; frames?: number };
  audio?: { codec: string; sampleRate: number; channels: number };
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  nb_frames?: string;
  sample_rate?: string;
  channels?: number;
  duration?: string;
  disposition?: { attached_pic?: number };
}

// ffmpeg reads any text file as "tty" ANSI art, a video stream of these codecs: not media to us.
const TEXT_ART = new Set(['ansi', 'bintext', 'xbin', 'idf']);

const rate = (r: string | undefined): number => {
  const [n, d] = (r ?? '0/1').split('/').map(Number);
  return d ? (n as number) / d : 0;
};

/** What a file holds, or a BAD_REQUEST that says it is not media. */
export async function probeMedia(bins: MediaBinaries, file: string): Promise<MediaInfo> {
  const p = startMedia(bins.ffprobe, ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', file]);
  let out = '';
  p.child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const { code, signal, stderr } = await p.done;
  const name = path.basename(file);
  // The shipped ffprobe (a 2023 static build) dies of SIGSEGV in its MPEG-TS demuxer, on any .ts:
  // ffmpeg's own report of the input says the same things.
  if (signal === 'SIGSEGV') return probeWithFfmpeg(bins, file);
  if (code !== 0)
    throw new DrmError('BAD_REQUEST', `${name} is not a media file ffmpeg can read (${lastLine(stderr)})`);
  const parsed = JSON.parse(out) as {
    format?: { format_name?: string; duration?: string; start_time?: string };
    streams?: ProbeStream[];
  };
  const streams = parsed.streams ?? [];
  // Cover art in music files is a "video" stream of one picture: not video.
  const v = streams.find(
    (s) => s.codec_type === 'video' && !s.disposition?.attached_pic && !TEXT_ART.has(s.codec_name ?? ''),
  );
  const a = streams.find((s) => s.codec_type === 'audio');
  if (!v && !a) throw new DrmError('BAD_REQUEST', `${name} is not a media file: it holds no audio or video stream`);
  const duration = Number(parsed.format?.duration ?? v?.duration ?? a?.duration ?? Number.NaN);
  const start = Number(parsed.format?.start_time ?? Number.NaN);
  return {
    duration: Number.isFinite(duration) ? duration : 0,
    ...(Number.isFinite(start) && { start }),
    formatName: parsed.format?.format_name ?? 'unknown',
    ...(v && {
      video: {
        codec: v.codec_name ?? 'unknown',
        width: v.width ?? 0,
        height: v.height ?? 0,
        fps: rate(v.avg_frame_rate) || rate(v.r_frame_rate),
        ...(v.nb_frames && { frames: Number(v.nb_frames) }),
      },
    }),
    ...(a && {
      audio: { codec: a.codec_name ?? 'unknown', sampleRate: Number(a.sample_rate ?? 0), channels: a.channels ?? 0 },
    }),
  };
}

const CHANNEL_LAYOUTS: Record<string, number> = {
  mono: 1,
  stereo: 2,
  '2.1': 3,
  quad: 4,
  '4.0': 4,
  '5.0': 5,
  '5.1': 6,
  '6.1': 7,
  '7.1': 8,
};

/** What `ffmpeg -i` says of a file (its stderr report): the fields probeMedia returns. */
export function parseFfmpegReport(report: string, name: string): MediaInfo {
  const d = /Duration: (\d+):(\d+):([\d.]+)/.exec(report);
  const duration = d ? Number(d[1]) * 3600 + Number(d[2]) * 60 + Number(d[3]) : 0;
  const format = /Input #0, (.+?), from '/.exec(report)?.[1] ?? 'unknown';
  const streams = report.split('\n').filter((l) => /^\s*Stream #\d+:\d+/.test(l));
  const v = streams.find((l) => /: Video: /.test(l) && !l.includes('(attached pic)'));
  const a = streams.find((l) => /: Audio: /.test(l));
  if (!v && !a) throw new DrmError('BAD_REQUEST', `${name} is not a media file: it holds no audio or video stream`);
  const video = v && {
    codec: /: Video: (\w+)/.exec(v)?.[1] ?? 'unknown',
    width: Number(/, (\d{2,5})x(\d{2,5})/.exec(v)?.[1] ?? 0),
    height: Number(/, (\d{2,5})x(\d{2,5})/.exec(v)?.[2] ?? 0),
    fps: Number(/, ([\d.]+) fps/.exec(v)?.[1] ?? /, ([\d.]+) tbr/.exec(v)?.[1] ?? 0),
  };
  const layout = a && /, \d+ Hz, ([^,]+)/.exec(a)?.[1]?.trim();
  const channels = layout
    ? (CHANNEL_LAYOUTS[layout.replace(/\(.*\)$/, '')] ?? Number(/^(\d+) channels/.exec(layout)?.[1] ?? 0))
    : 0;
  const audio = a && {
    codec: /: Audio: (\w+)/.exec(a)?.[1] ?? 'unknown',
    sampleRate: Number(/, (\d+) Hz/.exec(a)?.[1] ?? 0),
    channels,
  };
  return { duration, formatName: format, ...(video && { video }), ...(audio && { audio }) };
}

async function probeWithFfmpeg(bins: MediaBinaries, file: string): Promise<MediaInfo> {
  const { stderr } = await startMedia(bins.ffmpeg, ['-hide_banner', '-i', file]).done;
  const name = path.basename(file);
  if (!stderr.includes('Input #0'))
    throw new DrmError('BAD_REQUEST', `${name} is not a media file ffmpeg can read (${lastLine(stderr)})`);
  return parseFfmpegReport(stderr, name);
}

/**
 * The resolution label a catalog shows (720p, 1080p, 4K, 8K): the frame's height, or the height a
 * 16:9 frame of its width would have, whichever is larger, so a letterboxed 1920×800 is 1080p.
 */
export function resolutionLabel(width: number, height: number): string {
  const lines = Math.max(height, Math.round((width * 9) / 16));
  if (lines >= 4320) return '8K';
  if (lines >= 2160) return '4K';
  if (lines >= 1440) return '1440p';
  if (lines >= 1080) return '1080p';
  if (lines >= 720) return '720p';
  if (lines >= 480) return '480p';
  return `${height}p`;
}
