import path from 'node:path';
import type { MediaBinaries } from '../../media/binaries.js';
import type { MediaInfo } from '../../media/probe.js';
import { transcode } from '../../media/transcode.js';

/** The catalog's pictures of an item: a thumbnail for all, a short low-resolution preview for video. */
export const THUMBNAIL_FILE = 'thumbnail.jpg';
export const PREVIEW_FILE = 'preview.mp4';
const PREVIEW_SECONDS = 10;

/** A moment worth showing: a tenth of the way in, past any fade from black, within the first minute. */
const glimpseAt = (duration: number) => Math.min(60, Math.max(0, duration * 0.1));

export async function makeThumbnail(
  bins: MediaBinaries,
  input: string,
  info: MediaInfo,
  dir: string,
  signal?: AbortSignal,
): Promise<void> {
  const out = path.join(dir, THUMBNAIL_FILE);
  const what = `the thumbnail of ${path.basename(input)}`;
  if (info.video) {
    await transcode(
      bins,
      [
        '-ss',
        String(glimpseAt(info.duration)),
        '-i',
        input,
        '-map',
        '0:v:0',
        '-frames:v',
        '1',
        '-vf',
        "scale=-2:'2*trunc(min(360,ih)/2)'",
        '-q:v',
        '4',
        out,
      ],
      { what, signal },
    );
  } else {
    // Music: the waveform of the whole track.
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
        out,
      ],
      { what, signal },
    );
  }
}

/**
 * Ten seconds at 360p without a watermark: a preview is public, so it is kept too small and too
 * short to be worth leaking.
 */
export async function makePreview(
  bins: MediaBinaries,
  input: string,
  info: MediaInfo,
  dir: string,
  signal?: AbortSignal,
): Promise<void> {
  if (!info.video) return;
  const args = [
    '-ss',
    String(glimpseAt(info.duration)),
    '-t',
    String(PREVIEW_SECONDS),
    '-i',
    input,
    '-map',
    '0:v:0',
    ...(info.audio ? ['-map', '0:a:0', '-c:a', 'aac', '-b:a', '96k', '-ac', '2'] : []),
    '-vf',
    "scale=-2:'2*trunc(min(360,ih)/2)'",
    '-c:v',
    'libx264',
    '-crf',
    '28',
    '-preset',
    'veryfast',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    path.join(dir, PREVIEW_FILE),
  ];
  await transcode(bins, args, { what: `the preview of ${path.basename(input)}`, signal });
}
