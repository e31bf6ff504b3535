import path from 'node:path';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from './binaries.js';
import { lastLine, startMedia } from './spawn.js';

export interface MediaInfo {
  /** seconds */
  duration: number;
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
  const { code, stderr } = await p.done;
  const name = path.basename(file);
  if (code !== 0) throw new DrmError('BAD_REQUEST', `${name} is not a media file ffmpeg can read (${lastLine(stderr)})`);
  const parsed = JSON.parse(out) as { format?: { format_name?: string; duration?: string }; streams?: ProbeStream[] };
  const streams = parsed.streams ?? [];
  // Cover art in music files is a "video" stream of one picture: not video.
  const v = streams.find(
    (s) => s.codec_type === 'video' && !s.disposition?.attached_pic && !TEXT_ART.has(s.codec_name ?? ''),
  );
  const a = streams.find((s) => s.codec_type === 'audio');
  if (!v && !a) throw new DrmError('BAD_REQUEST', `${name} is not a media file: it holds no audio or video stream`);
  const duration = Number(parsed.format?.duration ?? v?.duration ?? a?.duration ?? Number.NaN);
  return {
    duration: Number.isFinite(duration) ? duration : 0,
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
    ...(a && { audio: { codec: a.codec_name ?? 'unknown', sampleRate: Number(a.sample_rate ?? 0), channels: a.channels ?? 0 } }),
  };
}
