import path from 'node:path';
import { DrmError } from '../../errors.js';
import type { MarkedVariants, VariantPiece } from '../engine-types.js';
import { openVideoMarking, rawVideoInput, type VideoMarkingJob } from './embed.js';

/**
 * What ingest packages for watermarked video: every frame marked both ways in one transform,
 * yuv420p. The same decode writes the detection reference (`o.reference`, ./reference.ts), so
 * nothing is left to do once the variants are written.
 */
export async function openVideoVariants(o: VideoMarkingJob): Promise<MarkedVariants> {
  const marking = await openVideoMarking(o);
  async function* pieces(): AsyncGenerator<VariantPiece> {
    let frames = 0;
    for await (const marked of marking.frames(() => 'both')) {
      frames++;
      yield {
        a: marked.A as Uint8Array,
        b: marked.B as Uint8Array,
        done: frames,
        total: Math.max(marking.expectedFrames, frames),
        release: marked.release,
      };
    }
    o.signal?.throwIfAborted();
    if (frames === 0) throw new DrmError('BAD_REQUEST', `${path.basename(o.input)} has no video frames`);
  }
  return { rawInput: rawVideoInput(marking), pieces, finish: async () => {} };
}
