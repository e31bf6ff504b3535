import path from 'node:path';
import { DrmError } from '../../errors.js';
import { monoPcm } from '../../media/audio-pcm.js';
import { type Detection, readOut } from '../segments.js';
import { type CoarseAlignment, coarseAlign, EnvelopeMeter, envelopeBlock, onsetFeature } from './align.js';
import { MIN_COVERAGE_SECONDS, scoreSegments } from './detect-score.js';
import { MOST_HELD_SECONDS, scorePieces } from './detect-pieces.js';
import { type Piece, placedSamples, placePieces } from './pieces.js';
import { audioOf } from './pipe.js';
import { FASTEST, leakSpeed, SLOWEST, type SpeedUndoing, speedUndoings } from './speed.js';

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
/**
 * Onsets of a time-stretched leak (pitch kept) line up less sharply: measured 0.37–0.40 at its
 * speed, with a peak 14–17 robust deviations clear. The undone leak must then line up as any leak.
 */
const MIN_SPEED_CORRELATION = 0.25;

interface Envelope {
  feature: Float64Array;
  /** the block energies the feature was made from */
  energies: Float64Array;
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

async function envelopesOfFile(
  o: MusicDetectOptions,
  file: string,
  sampleRate: number,
  phases: number,
  filter?: string,
): Promise<Envelope[]> {
  const block = envelopeBlock(sampleRate);
  const grid = Array.from({ length: phases }, (_, k) => Math.round((k * block) / phases));
  const meters = grid.map(() => new EnvelopeMeter(block));
  let seen = 0;
  for await (const samples of monoPcm(o.bins, file, { sampleRate, signal: o.signal, filter })) {
    grid.forEach((phase, k) => {
      const skip = Math.max(0, phase - seen);
      if (skip < samples.length) (meters[k] as EnvelopeMeter).add(skip > 0 ? samples.subarray(skip) : samples);
    });
    seen += samples.length;
  }
  o.signal?.throwIfAborted();
  return meters.map((m, k) => ({
    feature: onsetFeature(m.blocks),
    energies: m.blocks,
    samples: seen,
    phase: grid[k] as number,
  }));
}

/** Both envelopes at once (two decoders on two cores); if one fails, the other is stopped too. */
async function envelopesOf(o: MusicDetectOptions, sampleRate: number): Promise<[Envelope, Envelope[]]> {
  const local = new AbortController();
  const signal = o.signal ? AbortSignal.any([o.signal, local.signal]) : local.signal;
  try {
    const [original, leak] = await Promise.all([
      envelopesOfFile({ ...o, signal }, o.original, sampleRate, 1),
      envelopesOfFile({ ...o, signal }, o.leak, sampleRate, LEAK_PHASES),
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
  const leakRate = (await audioOf(o.bins, o.leak, 'leak')).sampleRate;
  // The tile layout depends on the rate: the leak is brought to the original's.
  const sampleRate = original.sampleRate;
  const [eo, grids] = await envelopesOf(o, sampleRate);
  const el = grids[0] as Envelope;
  if (el.samples < MIN_COVERAGE_SECONDS * sampleRate) {
    throw new DrmError(
      'BAD_REQUEST',
      `the leak ${path.basename(o.leak)} holds under ${MIN_COVERAGE_SECONDS} s of audio`,
    );
  }
  const plain = matchedEnvelopes(eo, grids);
  if (plain.matches) return detectAligned(o, sampleRate, eo, grids, plain);
  // No one offset: the leak may be the original's parts in another order, each placed on its own.
  const inPieces = placeAnywhere(eo, grids, sampleRate);
  if (inPieces) return detectAligned(o, sampleRate, eo, grids, { ...plain, pieces: inPieces });
  // Nothing lines up at the original's speed: the leak may be played faster or slower.
  const speed = leakSpeed(eo.feature, el.energies);
  if (speed.factor === 1 || speed.alignment.peakZ < MIN_PEAK_Z || speed.alignment.correlation < MIN_SPEED_CORRELATION)
    throw noMatch(plain.coarse);
  return detectAtSpeed(o, sampleRate, eo, speed.factor, leakRate);
}

/**
 * A leak played at another speed, read through each way of undoing it (./speed.ts); the one
 * whose waveforms then agree with the original's is the way it was made.
 */
async function detectAtSpeed(
  o: MusicDetectOptions,
  sampleRate: number,
  eo: Envelope,
  factor: number,
  leakRate: number,
): Promise<Detection> {
  let best: Detection | undefined;
  for (const undo of speedUndoings(factor, leakRate)) {
    const grids = await envelopesOfFile(o, o.leak, sampleRate, LEAK_PHASES, undo.filter);
    const matched = matchedEnvelopes(eo, grids, MIN_SPEED_CORRELATION);
    if (!matched.matches) continue;
    const d = await detectAligned(o, sampleRate, eo, grids, matched, undo).catch((err: unknown) => {
      if (err instanceof DrmError && err.code === 'BAD_REQUEST') return undefined;
      throw err;
    });
    if (!d) continue;
    d.alignment.speed = factor;
    d.alignment.pitchKept = undo.pitchKept;
    if (!best || (d.alignment.waveformCorrelation as number) > (best.alignment.waveformCorrelation as number)) best = d;
  }
  if (!best)
    throw new DrmError(
      'BAD_REQUEST',
      `the leak does not match the original: its onsets line up at ${factor}× speed, ` +
        `but its waveforms do not, either way that speed is undone`,
    );
  return best;
}

/**
 * The leak's pieces placed each where it fits clearly, on the grid where most of the leak is
 * placed; undefined unless that is at least half of the leak (a leak of some other music places
 * next to nothing).
 */
function placeAnywhere(eo: Envelope, grids: Envelope[], sampleRate: number): Piece[] | undefined {
  if ((grids[0] as Envelope).samples > MOST_HELD_SECONDS * sampleRate) return undefined;
  const placed = grids.map(
    (g) => placePieces(eo.feature, g.feature, undefined, envelopeBlock(sampleRate), g.phase) ?? [],
  );
  const best = placed.reduce((a, b) => (placedSamples(b) > placedSamples(a) ? b : a));
  return placedSamples(best) >= 0.5 * (grids[0] as Envelope).samples ? best : undefined;
}

interface Matched {
  coarse: CoarseAlignment;
  phase: number;
  /** the leak's pieces, placed already where no one offset lines it up */
  pieces?: Piece[];
}

async function detectAligned(
  o: MusicDetectOptions,
  sampleRate: number,
  eo: Envelope,
  grids: Envelope[],
  m: Matched,
  undo?: SpeedUndoing,
): Promise<Detection> {
  const el = grids[0] as Envelope;
  const { coarse, phase } = m;
  // The leak's block 0 of that grid starts `phase` samples in: original index = leak index + lag.
  const lag = coarse.lagBlocks * envelopeBlock(sampleRate) - phase;
  const streams = { sampleRate, lag, originalSamples: eo.samples, leakSamples: el.samples, undo };
  const grid = grids.find((g) => g.phase === phase) ?? el;
  const pieces =
    m.pieces ??
    (el.samples <= MOST_HELD_SECONDS * sampleRate
      ? placePieces(eo.feature, grid.feature, coarse.lagBlocks, envelopeBlock(sampleRate), phase)
      : undefined);
  const scored = pieces ? await scorePieces(o, streams, pieces) : await scoreSegments(o, streams);
  const matched = scored.filter((s) => s.fine.trusted);
  if (scored.length > 0 && matched.length === 0) {
    throw new DrmError(
      'BAD_REQUEST',
      'the leak does not match the original: their waveforms do not agree at any offset near the best one',
    );
  }
  const segments = scored.map((s) => s.reading);
  const offset = median(
    matched.map((s) => s.lag),
    lag,
  );
  const totals = scored.reduce((t, s) => ({ ol: t.ol + s.ol, oo: t.oo + s.oo }), { ol: 0, oo: 0 });
  return {
    segments,
    bits: readOut(segments, o.rule),
    alignment: {
      offsetSeconds: offset / sampleRate,
      offsetSamples: offset,
      gain: totals.oo > 0 ? totals.ol / totals.oo : 0,
      sampleRate,
      envelopeCorrelation: coarse.correlation,
      envelopePeakZ: coarse.peakZ,
      waveformCorrelation: median(
        scored.map((s) => s.fine.correlation),
        0,
      ),
      leakSeconds: el.samples / sampleRate,
      coveredSeconds: segments.reduce((s, r) => s + r.coverage, 0),
      ...(pieces && { piecesMoved: pieces.filter((p) => p.lag !== lag).length }),
    },
  };
}

/** The best envelope alignment over the leak's block grids, and whether it is clear enough to be this original. */
function matchedEnvelopes(
  original: Envelope,
  grids: Envelope[],
  least = MIN_ENVELOPE_CORRELATION,
): { coarse: CoarseAlignment; phase: number; matches: boolean } {
  const tries = grids.map((g) => ({ coarse: coarseAlign(original.feature, g.feature), phase: g.phase }));
  const best = tries.reduce((a, b) => (b.coarse.peakZ > a.coarse.peakZ ? b : a));
  return { ...best, matches: best.coarse.correlation >= least && best.coarse.peakZ >= MIN_PEAK_Z };
}

const noMatch = (coarse: CoarseAlignment) =>
  new DrmError(
    'BAD_REQUEST',
    `the leak does not match the original: no time offset lines their audio up, at ` +
      `any speed from ${SLOWEST}× to ${FASTEST}× (best envelope ` +
      `correlation ${coarse.correlation.toFixed(2)})`,
  );

const median = (v: number[], fallback: number) => {
  const sorted = [...v].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? fallback;
};
