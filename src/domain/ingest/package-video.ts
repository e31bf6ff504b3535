import path from 'node:path';
import { hlsMuxArgs, keyframeGridArgs, playlistIn } from '../../media/hls.js';
import { transcode } from '../../media/transcode.js';
import { type PackageJob, type Packaging, variantDir } from './packaging.js';
import { stillOutputs } from './previews.js';

/** x264 on the keyframe grid, and the audio as AAC that every HLS player decodes. */
function videoCodecArgs(job: PackageJob, audioInput: number | undefined): string[] {
  const audio =
    job.info.audio && audioInput !== undefined
      ? [
          '-map',
          `${audioInput}:a:0`,
          '-c:a',
          'aac',
          '-b:a',
          '160k',
          ...(job.info.audio.channels > 2 ? ['-ac', '2'] : []),
        ]
      : [];
  return [
    ...audio,
    '-c:v',
    'libx264',
    '-crf',
    String(job.crf),
    '-preset',
    job.preset,
    '-pix_fmt',
    'yuv420p',
    ...keyframeGridArgs(job.segmentSeconds),
  ];
}

/** One ffmpeg: decode, x264, AES-128 HLS into plain/, and the catalog's stills from the same decode. */
async function packagePlainVideo(job: PackageJob): Promise<void> {
  const out = variantDir(job, 'plain');
  const stills = stillOutputs(job.info, job.dir).flatMap((o) => [
    '-map',
    '0:v:0',
    '-vf',
    o.filters.join(','),
    ...o.args,
  ]);
  await transcode(
    job.bins,
    [
      '-i',
      job.input,
      '-map',
      '0:v:0',
      ...videoCodecArgs(job, 0),
      ...hlsMuxArgs(out, job.keyInfo, job.segmentSeconds),
      playlistIn(out),
      ...stills,
    ],
    {
      what: `the HLS segments of ${path.basename(job.input)}`,
      signal: job.signal,
      totalSeconds: job.info.duration,
      onProgress: job.onProgress,
    },
  );
}

/**
 * Marked video: each variant's frames through its own x264 on the same keyframe grid, so segment
 * n of A and of B cover the same frames; the original's audio goes into both.
 */
function markedVideoArgs(job: PackageJob): string[] {
  return [
    ...(job.info.audio ? ['-i', job.input] : []),
    '-map',
    '0:v:0',
    ...videoCodecArgs(job, job.info.audio ? 1 : undefined),
  ];
}

export const videoPackaging: Packaging = { plain: packagePlainVideo, markedArgs: markedVideoArgs };
