import { monoPcm, readMonoPcm } from '../../media/audio-pcm.js';
import { bitFromZ } from '../score.js';
import { fineAlign } from './align.js';
import {
  type AlignedStreams,
  FINE_RANGE_SECONDS,
  gainOver,
  leastAgreement,
  leastCoverage,
  type MusicDetectOptions,
  type ScoredSegment,
} from './detect-score.js';
import { musicScore } from './mark.js';
import type { Piece } from './pieces.js';
import { SampleWindow } from './pipe.js';
import { segmentPattern } from './segment.js';

/**
 * A leak whose pieces come from different places of the original (./pieces.ts) is read whole
 * into memory, up to this many seconds (some 50 MB at 44.1 kHz); a longer one is read as one
 * stretch, as before.
 */
export const MOST_HELD_SECONDS = 300;

/**
 * The second stage of music detection for a leak in pieces: each original segment is put
 * together from every piece of the leak that falls in it, each aligned to the sample on its own
 * waveform and its gain undone, and scored as ./detect-score.ts scores a segment.
 */
export async function scorePieces(
  o: MusicDetectOptions,
  a: AlignedStreams,
  pieces: readonly Piece[],
): Promise<ScoredSegment[]> {
  const { sampleRate, originalSamples } = a;
  const leak = await readMonoPcm(o.bins, o.leak, { sampleRate, signal: o.signal, filter: a.undo?.filter });
  const original = new SampleWindow(
    monoPcm(o.bins, o.original, { sampleRate, signal: o.signal })[Symbol.asyncIterator](),
  );
  const segmentLength = o.rule.segmentSeconds * sampleRate;
  const out: ScoredSegment[] = [];
  try {
    for (let s = 0; s * segmentLength < originalSamples; s++) {
      const s0 = s * segmentLength;
      const s1 = Math.min(s0 + segmentLength, originalSamples);
      const inside = pieces.filter((p) => p.leakStart + p.lag < s1 && p.leakEnd + p.lag > s0);
      if (inside.length > 0) {
        const scored = scoreFromPieces(o, s, { samples: await original.span(s0, s1), start: s0 }, leak, inside, {
          sampleRate,
          least: leastAgreement(a),
          coverage: leastCoverage(o.rule.segmentSeconds),
        });
        if (scored) out.push(scored);
      }
      o.signal?.throwIfAborted();
      o.onProgress?.(s1 / sampleRate, originalSamples / sampleRate);
    }
  } finally {
    await original.close();
  }
  return out;
}

function scoreFromPieces(
  o: MusicDetectOptions,
  index: number,
  segment: { samples: Float32Array; start: number },
  leak: Float32Array,
  pieces: readonly Piece[],
  how: { sampleRate: number; least: number; coverage: number },
): ScoredSegment | undefined {
  const { samples, start } = segment;
  const { sampleRate, least } = how;
  const suspect = Float32Array.from(samples);
  const range = Math.round(FINE_RANGE_SECONDS * sampleRate);
  const totals = { ol: 0, oo: 0, covered: 0 };
  let fine = { lag: 0, correlation: 0, trusted: false };
  let lag = 0;
  for (const p of pieces) {
    const c0 = Math.max(start, p.leakStart + p.lag, range + p.lag);
    const c1 = Math.min(start + samples.length, p.leakEnd + p.lag, leak.length - range + p.lag);
    if (c1 - c0 < sampleRate) continue;
    const window = leak.subarray(c0 - p.lag - range, c1 - p.lag + range);
    const found = fineAlign(samples.subarray(c0 - start, c1 - start), window, range);
    const trusted = found.correlation >= least;
    // As in ./detect-score.ts: original[n] matches leak[n − (lag − f)].
    const own = trusted ? p.lag - found.lag : p.lag;
    // c0 and c1 keep n − own inside the leak for any shift the fine search can find
    const at = (n: number) => leak[n - own] as number;
    const { ol, oo, gain } = gainOver(segment, at, c0, c1);
    if (!(gain > 1e-3)) continue;
    for (let n = c0; n < c1; n++) suspect[n - start] = at(n) / gain;
    totals.ol += ol;
    totals.oo += oo;
    totals.covered += c1 - c0;
    if (!fine.trusted || found.correlation > fine.correlation) [fine, lag] = [{ ...found, trusted }, own];
  }
  const coverage = totals.covered / sampleRate;
  if (coverage < how.coverage) return undefined;
  const z = musicScore(samples, suspect, sampleRate).z(
    segmentPattern(o.key, o.contentId, index, samples.length, sampleRate),
  );
  return { reading: { index, z, bit: bitFromZ(z), coverage }, fine, lag, ol: totals.ol, oo: totals.oo };
}
