import { DrmError } from '../errors.js';
import type { MediaBinaries } from '../media/binaries.js';
import { fixedRecords } from '../media/decode.js';
import { startMedia } from '../media/spawn.js';
import { deinterleave, interleave } from './audio-pipe.js';
import { audioOf, finishDecoder, musicSegmentVariants, stop } from './music-pipeline.js';
import { SEGMENT_SECONDS } from './segments.js';

export interface MusicVariantsJob {
  bins: MediaBinaries;
  key: Buffer;
  contentId: string;
  input: string;
  signal?: AbortSignal;
}

/** An audio file checked for marking, and both variants of its segments on demand. */
export interface MusicVariants {
  sampleRate: number;
  channels: number;
  /** seconds */
  duration: number;
  /**
   * Variant A and B of every 10-s segment in order, interleaved f32 samples. One segment is
   * decoded at a time: the consumer's pace (an encoder's pipe) holds the decoder back.
   */
  segments(): AsyncGenerator<{ index: number; a: Float32Array; b: Float32Array }>;
}

/** What ingest packages for watermarked music: the same marks embedMusic writes, both at once. */
export async function openMusicVariants(o: MusicVariantsJob): Promise<MusicVariants> {
  const { info, sampleRate, channels } = await audioOf(o.bins, o.input, 'input');
  async function* segments() {
    const decoder = startMedia(
      o.bins.ffmpeg,
      ['-v', 'error', '-i', o.input, '-map', '0:a:0', '-ac', String(channels), '-ar', String(sampleRate), '-f', 'f32le', 'pipe:1'],
      o.signal,
    );
    const segmentBytes = SEGMENT_SECONDS * sampleRate * channels * 4;
    let index = 0;
    try {
      for await (const bytes of fixedRecords(decoder.child.stdout as AsyncIterable<Buffer>, segmentBytes)) {
        o.signal?.throwIfAborted();
        const whole = bytes.length - (bytes.length % (4 * channels));
        if (whole === 0) break;
        const planes = deinterleave(new Float32Array(bytes.buffer, bytes.byteOffset, whole / 4), channels);
        const v = musicSegmentVariants(planes, sampleRate, o.key, o.contentId, index);
        yield { index, a: interleave(v.a), b: interleave(v.b) };
        index++;
      }
      await finishDecoder(decoder, o.input, o.signal);
      if (index === 0) throw new DrmError('BAD_REQUEST', `${o.input} has no audio samples`);
    } finally {
      await stop(decoder);
    }
  }
  return { sampleRate, channels, duration: info.duration, segments };
}
