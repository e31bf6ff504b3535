import path from 'node:path';
import { hlsMuxArgs, playlistIn } from '../../media/hls.js';
import { transcode } from '../../media/transcode.js';
import { type PackageJob, type Packaging, variantDir } from './packaging.js';

/** Music is served as audio-only TS segments of AAC, which hls.js and Safari play. */
const AAC = ['-c:a', 'aac', '-b:a', '192k'];

async function packagePlainMusic(job: PackageJob): Promise<void> {
  const out = variantDir(job, 'plain');
  await transcode(
    job.bins,
    ['-i', job.input, '-map', '0:a:0', ...AAC, ...hlsMuxArgs(out, job.keyInfo, job.segmentSeconds), playlistIn(out)],
    {
      what: `the HLS segments of ${path.basename(job.input)}`,
      signal: job.signal,
      totalSeconds: job.info.duration,
      onProgress: job.onProgress,
    },
  );
}

/** Marked music: each variant's samples straight into AAC. */
export const musicPackaging: Packaging = { plain: packagePlainMusic, markedArgs: () => AAC };
