import path from 'node:path';
import type { MediaBinaries } from '../../media/binaries.js';
import type { MediaInfo } from '../../media/probe.js';
import { transcode } from '../../media/transcode.js';
import type { VideoOutput } from '../../media/video-frames.js';

/**
 * The catalog's pictures of an item: a thumbnail for all, a short low-resolution preview for video.
 * A video's are more outputs of the decode that packages it (stillOutputs): decoding the source
 * again for them took 2 s of a 30-s 1080p film's ingest, with one core idle.
 */
export const THUMBNAIL_FILE = 'thumbnail.jpg';
export const PREVIEW_FILE = 'preview.mp4';
const PREVIEW_SECONDS = 10;

/** A moment worth showing: a tenth of the way in, past any fade from black, within the first minute. */
const glimpseAt = (duration: number) => Math.min(60, Math.max(0, duration * 0.1));

/** At most 360 lines, the width in proportion and even. */
const SMALL = "scale=-2:'2*trunc(min(360,ih)/2)'";

/**
 * A video's thumbnail (the picture at the glimpse) and its preview: ten seconds from there at
 * 360p, without a watermark. A preview is public, so it is kept too small and too short to be
 * worth leaking. Each is an output of a decode of the source's first video stream (filters from
 * its pictures, then output options that also take the source's audio), written into `dir`.
 */
export function stillOutputs(info: MediaInfo, dir: string): VideoOutput[] {
  const at = glimpseAt(info.duration).toFixed(3);
  const clip = `start=${at}:duration=${PREVIEW_SECONDS}`;
  const audio = info.audio
    ? ['-map', '0:a:0', '-af', `atrim=${clip},asetpts=PTS-STARTPTS`, '-c:a', 'aac', '-b:a', '96k', '-ac', '2']
    : [];
  return [
    {
      filters: [`trim=start=${at}`, SMALL],
      args: ['-frames:v', '1', '-q:v', '4', path.join(dir, THUMBNAIL_FILE)],
    },
    {
      filters: [`trim=${clip}`, 'setpts=PTS-STARTPTS', SMALL],
      args: [
        ...audio,
        '-c:v',
        'libx264',
        // ten small seconds beside the film's own encodes: one thread keeps up
        '-threads',
        '1',
        '-crf',
        '28',
        '-preset',
        'veryfast',
        '-pix_fmt',
        'yuv420p',
        '-movflags',
        '+faststart',
        path.join(dir, PREVIEW_FILE),
      ],
    },
  ];
}

/** Music's thumbnail: the waveform of the whole track. */
export async function makeMusicThumbnail(
  bins: MediaBinaries,
  input: string,
  dir: string,
  signal?: AbortSignal,
): Promise<void> {
  await transcode(
    bins,
    [
      '-i',
      input,
      '-filter_complex',
      '[0:a:0]showwavespic=s=640x360:colors=0x3b82f6',
      '-frames:v',
      '1',
      '-q:v',
      '4',
      path.join(dir, THUMBNAIL_FILE),
    ],
    { what: `the thumbnail of ${path.basename(input)}`, signal },
  );
}
