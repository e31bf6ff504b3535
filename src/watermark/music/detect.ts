import path from 'node:path';
import { DrmError } from '../../errors.js';
import type { MediaBinaries } from '../../media/binaries.js';
import { monoPcm } from '../../media/audio-pcm.js';
import { type Detection, readOut } from '../segments.js';
import { type CoarseAlignment, coarseAlign, EnvelopeMeter, envelopeBlock, onsetFeature } from './align.js';
import { MIN_COVERAGE_SECONDS, scoreSegments } from './detect-score.js';
import { audioOf } from './pipe.js';

/**
 * Reading the bits back from a music leak with the original at hand: the two are lined up on
 * their onset envelopes (this file), then each segment is aligned to the sample and scored
 * (./detect-score.ts). Both stream through ffmpeg pipes, so a long file is never held whole.
 */

import type { MusicDetectOptions } from './detect-score.js';

export type { MusicDetectOptions } from './detect-score.js';

/**
 * The leak must line up with the original this clearly. Measured: a leak of this original
 * correlates 0.7–1.0 with a peak 10–34 robust deviations above the other lags (3-s excerpts,
 * MP3, AAC 64k, resampling); other music reached 0.24 and 4.6 at best, over 3-s excerpts.
 */
const MIN_ENVELOPE_CORRELATION = 0.4;
const MIN_PEAK_Z = 6;

interface Envelope {
  feature: Float64Array;
  samples: number;
  /** samples skipped before the first block: the block grid's phase */
  phase: number;
}

/**
 * Leak envelopes are taken on three block grids a third of a block apart. Onsets are sharp, and a
 * leak whose delay is not a whole number of 10-ms blocks (an AAC or MP3 encoder delay, a cut at
 * any sample) splits each onset over two blocks: against a 1024-sample (2.3-block) AAC delay the
 * best correlation fell from 0.997 to 0.50 and no offset was found. One of three grids always
 * lies within a sixth of a block of the original's.
 */
const LEAK_PHASES = 3;

async function envelopesOfFile(bins: MediaBinaries, file: string, sampleRate: number, phases: number, signal?: AbortSignal): Promise<Envelope[]> {
  const block = envelopeBlock(sampleRate);
  const grid = Array.from({ length: phases }, (_, k) => Math.round((k * block) / phases));
  const meters = grid.map(() => new EnvelopeMeter(block));
  let seen = 0;
  for await (const samples of monoPcm(bins, file, { sampleRate, signal })) {
    grid.forEach((phase, k) => {
      const skip = Math.max(0, phase - seen);
      if (skip < samples.length) (meters[k] as EnvelopeMeter).add(skip > 0 ? samples.subarray(skip) : samples);
    });
    seen += samples.length;
  }
  return meters.map((m, k) => ({ feature: onsetFeature(m.blocks), samples: seen, phase: grid[k] as number }));
}

/** Both envelopes at once (two decoders on two cores); if one fails, the other is stopped too. */
async function envelopesOf(o: MusicDetectOptions, sampleRate: number): Promise<[Envelope, Envelope[]]> {
  const local = new AbortController();
  const signal = o.signal ? AbortSignal.any([o.signal, local.signal]) : local.signal;
  try {
    const [original, leak] = await Promise.all([
      envelopesOfFile(o.bins, o.original, sampleRate, 1, signal),
      envelopesOfFile(o.bins, o.leak, sampleRate, LEAK_PHASES, signal),
    ]);
    o.signal?.throwIfAborted();
    return [original[0] as Envelope, leak];
  } catch (err) {
    local.abort();
    throw err;
  }
}

export async function detectMusic(o: MusicDetectOptions): Promise<Detection> {
  const original = await audioOf(o.bins, o.original, 'original');
  await audioOf(o.bins, o.leak, 'leak');
  // The tile layout depends on the rate: the leak is brought to the original's.
  const sampleRate = original.sampleRate;
  const [eo, grids] = await envelopesOf(o, sampleRate);
  const el = grids[0] as Envelope;
  if (el.samples < MIN_COVERAGE_SECONDS * sampleRate) {
    throw new DrmError('BAD_REQUEST', `the leak ${path.basename(o.leak)} holds under ${MIN_COVERAGE_SECONDS} s of audio`);
  }
  const { coarse, phase } = matchedEnvelopes(eo, grids);
  // The leak's block 0 of that grid starts `phase` samples in: original index = leak index + lag.
  const lag = coarse.lagBlocks * envelopeBlock(sampleRate) - phase;
  const scored = await scoreSegments(o, { sampleRate, lag, originalSamples: eo.samples, leakSamples: el.samples });
  const matched = scored.filter((s) => s.fine.trusted);
  if (scored.length > 0 && matched.length === 0) {
    throw new DrmError('BAD_REQUEST', 'the leak does not match the original: their waveforms do not agree at any offset near the best one');
  }
  const segments = scored.map((s) => s.reading);
  const offset = median(matched.map((s) => s.lag), lag);
  const totals = scored.reduce((t, s) => ({ ol: t.ol + s.ol, oo: t.oo + s.oo }), { ol: 0, oo: 0 });
  return {
    segments,
    bits: readOut(segments),
    alignment: {
      offsetSeconds: offset / sampleRate,
      offsetSamples: offset,
      gain: totals.oo > 0 ? totals.ol / totals.oo : 0,
      sampleRate,
      envelopeCorrelation: coarse.correlation,
      envelopePeakZ: coarse.peakZ,
      waveformCorrelation: median(scored.map((s) => s.fine.correlation), 0),
      leakSeconds: el.samples / sampleRate,
      coveredSeconds: segments.reduce((s, r) => s + r.coverage, 0),
    },
  };
}

/** The best envelope alignment over the leak's block grids, or a BAD_REQUEST when the leak is not this original at all. */
function matchedEnvelopes(original: Envelope, grids: Envelope[]): { coarse: CoarseAlignment; phase: number } {
  const tries = grids.map((g) => ({ coarse: coarseAlign(original.feature, g.feature), phase: g.phase }));
  const best = tries.reduce((a, b) => (b.coarse.peakZ > a.coarse.peakZ ? b : a));
  const { coarse } = best;
  if (coarse.correlation < MIN_ENVELOPE_CORRELATION || coarse.peakZ < MIN_PEAK_Z) {
    throw new DrmError(
      'BAD_REQUEST',
      `the leak does not match the original: no time offset lines their audio up (best envelope correlation ${coarse.correlation.toFixed(2)})`,
    );
  }
  return best;
}

const median = (v: number[], fallback: number) => {
  const sorted = [...v].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? fallback;
};
