import type { DetectJob } from '../segments.js';
import { monoPcm } from '../../media/audio-pcm.js';
import { bitFromZ } from '../score.js';
import type { SegmentReading } from '../segments.js';
import { fineAlign } from './align.js';
import { musicScore } from './mark.js';
import { SampleWindow } from './pipe.js';
import { segmentPattern } from './segment.js';
import type { SpeedUndoing } from './speed.js';

// The second stage of music detection (./detect.ts): each segment aligned to the sample and scored.

/** A segment the leak covers for less than this is not scored: too few tiles to say anything. */
export const MIN_COVERAGE_SECONDS = 2;

/** The least coverage scored in segments of `segmentSeconds`: 2 s, or half of a shorter segment. */
export const leastCoverage = (segmentSeconds: number): number => Math.min(MIN_COVERAGE_SECONDS, segmentSeconds / 2);

/**
 * The waveforms must agree this well once aligned to the sample (about 0.98 and up through a codec,
 * 0.26–0.4 through a time stretch that kept the pitch, near 0 for other audio)
 */
const MIN_WAVEFORM_CORRELATION = 0.3;
/**
 * The same through a time stretch that kept the pitch: its pieces agree with the original loosely
 * (medians of 0.23–0.36 measured).
 */
const MIN_STRETCHED_CORRELATION = 0.25;

/** How well a segment's waveform must agree with the original's for its own fine lag to be trusted. */
export const leastAgreement = (a: AlignedStreams) =>
  a.undo?.pitchKept ? MIN_STRETCHED_CORRELATION : MIN_WAVEFORM_CORRELATION;

/** How far (seconds) the sample-exact search looks around the envelope's lag. */
export const FINE_RANGE_SECONDS = 0.04;

/** What a music detection is asked (./detect.ts re-exports it). */
export interface MusicDetectOptions extends DetectJob {
  onProgress?: (doneSeconds: number, totalSeconds: number) => void;
}

export interface AlignedStreams {
  sampleRate: number;
  /** original index = leak index + lag (samples, from the envelopes) */
  lag: number;
  originalSamples: number;
  leakSamples: number;
  /** how the leak's speed is undone (./speed.ts): the ffmpeg filter it is read through */
  undo?: SpeedUndoing | undefined;
}

export interface ScoredSegment {
  reading: SegmentReading;
  /** the sample-exact search in this segment, and whether it was trusted */
  fine: { lag: number; correlation: number; trusted: boolean };
  /** original index = leak index + lag, as used for this segment */
  lag: number;
  /** Σ original·leak and Σ original² over the covered samples, for the overall gain */
  ol: number;
  oo: number;
}

/** Samples [start, start + samples.length) of one stream. */
interface Span {
  samples: Float32Array;
  start: number;
}

/**
 * Second pass over both files side by side, one original segment at a time: refine the lag to
 * the sample on the segment's own waveform (a quiet segment that cannot be trusted keeps the
 * last good lag), undo the gain, and score the segment.
 */
export async function scoreSegments(o: MusicDetectOptions, a: AlignedStreams): Promise<ScoredSegment[]> {
  const { sampleRate, originalSamples } = a;
  const original = new SampleWindow(
    monoPcm(o.bins, o.original, { sampleRate, signal: o.signal })[Symbol.asyncIterator](),
  );
  const leak = new SampleWindow(
    monoPcm(o.bins, o.leak, { sampleRate, signal: o.signal, filter: a.undo?.filter })[Symbol.asyncIterator](),
  );
  const range = Math.round(FINE_RANGE_SECONDS * sampleRate);
  const segmentLength = o.rule.segmentSeconds * sampleRate;
  const least = leastCoverage(o.rule.segmentSeconds) * sampleRate;
  const out: ScoredSegment[] = [];
  let lastGood = 0;
  try {
    for (let s = 0; s * segmentLength < originalSamples; s++) {
      const s0 = s * segmentLength;
      const s1 = Math.min(s0 + segmentLength, originalSamples);
      const c0 = Math.max(s0, a.lag);
      const c1 = Math.min(s1, a.lag + a.leakSamples);
      if (c1 - c0 >= least) {
        const segment: Span = { samples: await original.span(s0, s1), start: s0 };
        const window: Span = {
          samples: await leak.span(c0 - a.lag - range, c1 - a.lag + range),
          start: c0 - a.lag - range,
        };
        const found = fineAlign(segment.samples.subarray(c0 - s0, c1 - s0), window.samples, range);
        const trusted = found.correlation >= leastAgreement(a);
        if (trusted) lastGood = found.lag;
        // fineAlign: segment[i] matches window[i + range + f], and window[w] is leak[c0 − lag − range + w],
        // so the segment's own lag is lag − f (the sign mattered once the coarse lag stopped being whole blocks).
        const scored = scoreSegment(o, s, segment, window, a.lag - lastGood, a);
        out.push({ ...scored, fine: { ...found, trusted } });
      }
      o.signal?.throwIfAborted();
      o.onProgress?.(s1 / sampleRate, originalSamples / sampleRate);
    }
  } finally {
    await Promise.all([original.close(), leak.close()]);
  }
  o.signal?.throwIfAborted();
  return out;
}

/**
 * One segment's reading, with the leak (gain undone) in place of the original where it covers
 * the segment. Samples it does not cover are the original's own, so their tiles measure no
 * change and add nothing to z either way.
 */
function scoreSegment(
  o: MusicDetectOptions,
  index: number,
  segment: Span,
  window: Span,
  lag: number,
  a: AlignedStreams,
): Omit<ScoredSegment, 'fine'> {
  const { samples, start } = segment;
  const c0 = Math.max(start, lag);
  const c1 = Math.min(start + samples.length, lag + a.leakSamples);
  const leakAt = (n: number) => window.samples[n - lag - window.start] as number;
  const { ol, oo, gain } = gainOver(segment, leakAt, c0, c1);
  const coverage = Math.max(0, c1 - c0) / a.sampleRate;
  // A leak that is silent (or inverted) where the original plays has nothing to score.
  if (!(gain > 1e-3)) return { lag, ol, oo, reading: { index, z: 0, bit: '?', coverage } };
  const suspect = Float32Array.from(samples);
  for (let n = c0; n < c1; n++) suspect[n - start] = leakAt(n) / gain;
  const pattern = segmentPattern(o.key, o.contentId, index, samples.length, a.sampleRate);
  const z = musicScore(samples, suspect, a.sampleRate).z(pattern);
  return { lag, ol, oo, reading: { index, z, bit: bitFromZ(z), coverage } };
}

/**
 * How much louder the leak is than the original. Where the waveforms agree (any codec, a resampled
 * speed undone) it is their projection, which codec noise does not inflate. A time stretch that
 * kept the pitch rebuilds the waveform from overlapping pieces, so the waveforms agree only
 * loosely (measured 0.3–0.4) though the spectrum the mark lives in is kept: there the projection
 * would take the gain for a fifth of what it is, and the ratio of energies is used.
 */
/** Over original samples [c0, c1): Σ original·leak, Σ original², and the leak's gain (leakGain). */
export function gainOver(segment: Span, leakAt: (n: number) => number, c0: number, c1: number) {
  const { samples, start } = segment;
  let ol = 0;
  let oo = 0;
  let ll = 0;
  for (let n = c0; n < c1; n++) {
    const x = samples[n - start] as number;
    const y = leakAt(n);
    ol += x * y;
    oo += x * x;
    ll += y * y;
  }
  return { ol, oo, gain: leakGain(ol, oo, ll) };
}

function leakGain(ol: number, oo: number, ll: number): number {
  if (!(oo > 0 && ll > 0)) return 0;
  const agreement = ol / Math.sqrt(oo * ll);
  return agreement >= COHERENT ? ol / oo : Math.sqrt(ll / oo);
}

/** Waveforms that agree this well are the same waveform through a codec. */
const COHERENT = 0.9;
