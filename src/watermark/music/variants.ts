import path from 'node:path';
import { DrmError } from '../../errors.js';
import { fixedRecords } from '../../media/records.js';
import type { MarkedVariants, VariantPiece, VariantsRequest } from '../engine-types.js';
import { audioOf, decodeInterleaved, deinterleave, finishDecoder, interleave, stop } from './pipe.js';
import { MUSIC_REFERENCE, writeMusicReference } from './reference.js';
import { musicSegmentVariants } from './segment.js';

const bytes = (x: Float32Array) => new Uint8Array(x.buffer, x.byteOffset, x.byteLength);

/**
 * What ingest packages for watermarked music: the same marks embedMusic writes, both at once,
 * a segment at a time as interleaved f32 samples; then the detection reference.
 */
export async function openMusicVariants(o: VariantsRequest): Promise<MarkedVariants> {
  const { info, sampleRate, channels } = await audioOf(o.bins, o.input, 'input');
  // One segment is decoded at a time: the consumer's pace (an encoder's pipe) holds the decoder back.
  async function* pieces(): AsyncGenerator<VariantPiece> {
    const decoder = decodeInterleaved(o.bins, o.input, { sampleRate, channels }, o.signal);
    const seconds = o.segmentSeconds;
    const segmentBytes = seconds * sampleRate * channels * 4;
    let index = 0;
    try {
      for await (const record of fixedRecords(decoder.child.stdout as AsyncIterable<Buffer>, segmentBytes)) {
        o.signal?.throwIfAborted();
        const whole = record.length - (record.length % (4 * channels));
        if (whole === 0) break;
        const planes = deinterleave(new Float32Array(record.buffer, record.byteOffset, whole / 4), channels);
        const v = musicSegmentVariants(planes, sampleRate, o.key, o.contentId, index);
        index++;
        const total = info.duration || index * seconds;
        yield {
          a: bytes(interleave(v.a)),
          b: bytes(interleave(v.b)),
          done: Math.min(total, index * seconds),
          total,
        };
      }
      await finishDecoder(decoder, o.input, o.signal);
      if (index === 0) throw new DrmError('BAD_REQUEST', `${o.input} has no audio samples`);
    } finally {
      await stop(decoder);
    }
  }
  return {
    rawInput: ['-f', 'f32le', '-ar', String(sampleRate), '-ac', String(channels), '-i', 'pipe:0'],
    pieces,
    finish: () => writeMusicReference(o.bins, o.input, path.join(o.referenceDir, MUSIC_REFERENCE), o.signal),
  };
}
