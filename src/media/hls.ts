import fs from 'node:fs';
import path from 'node:path';
import { DrmError } from '../errors.js';

/**
 * HLS as the service packages and serves it (docs/api.md): MPEG-TS segments of 10 s (or the
 * content's shorter choice, 2, 4 or 6) cut on a forced keyframe grid, AES-128-CBC under one key
 * per content item with IV = the media sequence number (ffmpeg's default when the key info names
 * no IV), a VOD playlist.
 */
export const HLS_SEGMENT_SECONDS = 10;
export const PLAYLIST_FILE = 'index.m3u8';

/** A keyframe at every multiple of the segment length, so every variant cuts at the same instants. */
export function keyframeGridArgs(seconds = HLS_SEGMENT_SECONDS): string[] {
  return ['-force_key_frames', `expr:gte(t,n_forced*${seconds})`];
}

/**
 * Writes ffmpeg's key info file (key URI, key file, no IV) and the key beside it; both live in the
 * staging directory, which is removed before the content is published.
 */
export function writeKeyInfo(dir: string, key: Buffer): string {
  if (key.length !== 16) throw new DrmError('INTERNAL_ERROR', 'an AES-128 key has 16 bytes');
  const keyFile = path.join(dir, 'segment.key');
  fs.writeFileSync(keyFile, key, { mode: 0o600 });
  const info = path.join(dir, 'segment.keyinfo');
  // The URI is a placeholder: the playlist served to a session names the session's key URL.
  fs.writeFileSync(info, `key\n${keyFile}\n`, { mode: 0o600 });
  return info;
}

/**
 * The muxer options of an ffmpeg command that writes encrypted TS segments into `dir`; the
 * command's output is the playlist, `playlistIn(dir)`.
 */
export function hlsMuxArgs(dir: string, keyInfo: string, seconds = HLS_SEGMENT_SECONDS): string[] {
  return [
    '-f',
    'hls',
    '-hls_time',
    String(seconds),
    '-hls_playlist_type',
    'vod',
    '-hls_segment_type',
    'mpegts',
    '-hls_key_info_file',
    keyInfo,
    '-hls_segment_filename',
    path.join(dir, '%05d.ts'),
  ];
}

export const playlistIn = (dir: string): string => path.join(dir, PLAYLIST_FILE);

export interface HlsSegment {
  /** seconds */
  duration: number;
  /** the file name inside the variant's directory */
  file: string;
}

/** The segments of a VOD playlist ffmpeg wrote, in order. */
export function readPlaylist(file: string): HlsSegment[] {
  return parsePlaylist(fs.readFileSync(file, 'utf8'), file);
}

/** The segments of a VOD playlist's text; `label` names it in an error. */
export function parsePlaylist(text: string, label: string): HlsSegment[] {
  const segments: HlsSegment[] = [];
  let duration: number | undefined;
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith('#EXTINF:')) duration = Number.parseFloat(line.slice(8));
    else if (line && !line.startsWith('#')) {
      if (duration === undefined || !Number.isFinite(duration))
        throw new DrmError('INTERNAL_ERROR', `${label}: a segment without #EXTINF`);
      segments.push({ duration, file: path.basename(line) });
      duration = undefined;
    }
  }
  return segments;
}

/**
 * The playlist one session receives: the same segments, each through the service, and the
 * session's key URL. TARGETDURATION is the segment length unless a segment rounds above it.
 */
export function sessionPlaylist(
  segments: readonly HlsSegment[],
  segmentSeconds: number,
  urls: { key: string; segment: (n: number) => string },
): string {
  const target = Math.max(segmentSeconds, ...segments.map((s) => Math.round(s.duration)));
  const out = [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${target}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    '#EXT-X-PLAYLIST-TYPE:VOD',
    `#EXT-X-KEY:METHOD=AES-128,URI="${urls.key}"`,
  ];
  segments.forEach((s, n) => {
    out.push(`#EXTINF:${s.duration.toFixed(6)},`, urls.segment(n));
  });
  out.push('#EXT-X-ENDLIST', '');
  return out.join('\n');
}
