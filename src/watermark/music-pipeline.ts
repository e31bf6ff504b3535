import fs from 'node:fs';
import path from 'node:path';
import { frameCount } from '../../gpu/stft/stft.js';
import { DrmError } from '../errors.js';
import type { MediaBinaries } from '../media/binaries.js';
import { fixedRecords, monoPcm } from '../media/decode.js';
import { type MediaInfo, probeMedia } from '../media/probe.js';
import { lastLine, type MediaProcess, startMedia } from '../media/spawn.js';
import { type CoarseAlignment, coarseAlign, EnvelopeMeter, envelopeBlock, fineAlign, onsetFeature } from './audio-align.js';
import { deinterleave, type FedProcess, interleave, SampleWindow, startFed } from './audio-pipe.js';
import { DEFAULT_MUSIC_MARK, musicDelta, musicPattern, musicScore, tileLayout } from './music-mark.js';
import { bitFromZ } from './score.js';
import { type Detection, type EmbedJob, parseBits, readOut, SEGMENT_SECONDS, type SegmentReading, variantFor } from './segments.js';

/**
 * The music A/B pipeline: marking a whole audio file for one viewer's bits, and reading the bits
 * back from a leak with the original at hand. Both stream through ffmpeg pipes a 10-s segment at
 * a time, so a long file is never held whole.
 */

/**
 * The mark stays at least this far below the music. With α = 0.04 on the 500 Hz – 5 kHz band
 * only music that lives almost wholly in that band comes near it; there δ is scaled down to
 * the limit, which weakens the mark but keeps its sign, so detection is unchanged in kind.
 */
export const MIN_SNR_DB = 30;

const OUTPUT_BITRATE = '256k';

// ---------------------------------------------------------------------------------------------
// One segment

/** The mono mix of planar channels: what a mono downmix of the marked copy will hold. */
function monoMix(channels: readonly Float32Array[]): Float32Array {
  const length = channels[0]?.length ?? 0;
  const out = new Float32Array(length);
  for (const c of channels) for (let i = 0; i < length; i++) out[i] = (out[i] as number) + (c[i] as number);
  const scale = 1 / Math.max(1, channels.length);
  for (let i = 0; i < length; i++) out[i] = (out[i] as number) * scale;
  return out;
}

const energy = (v: ArrayLike<number>) => {
  let e = 0;
  for (let i = 0; i < v.length; i++) e += (v[i] as number) ** 2;
  return e;
};

/** The pattern of a segment of the given length in samples. */
export function segmentPattern(key: Buffer, contentId: string, segment: number, length: number, sampleRate: number): Float32Array {
  const { count } = tileLayout(frameCount(length, DEFAULT_MUSIC_MARK.hop), sampleRate);
  return musicPattern(key, contentId, segment, count);
}

/**
 * δ of one segment (variant A adds it to every channel, B subtracts it). It comes from the mono
 * mix and is the same on every channel, so a mono downmix of either variant carries it whole.
 */
export function musicSegmentDelta(
  channels: readonly Float32Array[],
  sampleRate: number,
  key: Buffer,
  contentId: string,
  segment: number,
): Float32Array {
  const mono = monoMix(channels);
  if (mono.length === 0) return mono;
  const delta = musicDelta(mono, sampleRate, segmentPattern(key, contentId, segment, mono.length, sampleRate));
  const signal = channels.reduce((s, c) => s + energy(c), 0);
  const mark = channels.length * energy(delta);
  const limit = signal * 10 ** (-MIN_SNR_DB / 10);
  if (mark > limit) {
    const scale = Math.sqrt(limit / mark);
    for (let i = 0; i < delta.length; i++) delta[i] = (delta[i] as number) * scale;
  }
  return delta;
}

/** Both variants of one segment (planar channels), as ingest packages them. */
export function musicSegmentVariants(
  channels: readonly Float32Array[],
  sampleRate: number,
  key: Buffer,
  contentId: string,
  segment: number,
): { a: Float32Array[]; b: Float32Array[] } {
  const delta = musicSegmentDelta(channels, sampleRate, key, contentId, segment);
  return { a: channels.map((c) => addScaled(c, delta, 1)), b: channels.map((c) => addScaled(c, delta, -1)) };
}

function addScaled(x: Float32Array, delta: Float32Array, sign: 1 | -1): Float32Array {
  const out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = (x[i] as number) + sign * (delta[i] as number);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Embedding

/** `output` is an .m4a (AAC, 256 kb/s, the original sample rate and channel count). */
export interface MusicEmbedOptions extends EmbedJob {
  onProgress?: (doneSeconds: number, totalSeconds: number) => void;
}

/** The audio stream of a file, or a BAD_REQUEST saying why there is none to work on. */
export async function audioOf(bins: MediaBinaries, file: string, role: string): Promise<{ info: MediaInfo; sampleRate: number; channels: number }> {
  const info = await probeMedia(bins, file);
  const name = path.basename(file);
  if (!info.audio) throw new DrmError('BAD_REQUEST', `${role} ${name} has no audio stream`);
  const { sampleRate, channels } = info.audio;
  if (!(sampleRate > 0 && channels > 0)) throw new DrmError('BAD_REQUEST', `${role} ${name} has an audio stream without a sample rate or channels`);
  return { info, sampleRate, channels };
}

export async function embedMusic(o: MusicEmbedOptions): Promise<{ segments: number; sampleRate: number; snrDb: number }> {
  const bits = parseBits(o.bits);
  if (path.resolve(o.input) === path.resolve(o.output)) throw new DrmError('BAD_REQUEST', 'the output must be a different file from the input');
  const { info, sampleRate, channels } = await audioOf(o.bins, o.input, 'input');
  const decoder = startMedia(
    o.bins.ffmpeg,
    ['-v', 'error', '-i', o.input, '-map', '0:a:0', '-ac', String(channels), '-ar', String(sampleRate), '-f', 'f32le', 'pipe:1'],
    o.signal,
  );
  const encoder = startFed(
    o.bins.ffmpeg,
    ['-v', 'error', '-y', '-f', 'f32le', '-ar', String(sampleRate), '-ac', String(channels), '-i', 'pipe:0',
      '-c:a', 'aac', '-b:a', OUTPUT_BITRATE, '-f', 'ipod', o.output],
    o.signal,
  );
  try {
    const marked = await markStream(o, bits, decoder, encoder, { sampleRate, channels, totalSeconds: info.duration });
    await finishDecoder(decoder, o.input, o.signal);
    encoder.child.stdin.end();
    const end = await encoder.done;
    o.signal?.throwIfAborted();
    if (end.code !== 0) throw new DrmError('BAD_REQUEST', `could not write ${o.output}: ${lastLine(end.stderr)}`);
    // Silence carries no mark: nothing was added, so no finite ratio.
    const snrDb = marked.mark > 0 ? 10 * Math.log10(marked.signal / marked.mark) : Number.POSITIVE_INFINITY;
    return { segments: marked.segments, sampleRate, snrDb };
  } catch (err) {
    await stop(decoder, encoder);
    fs.rmSync(o.output, { force: true });
    // A cancelled run can also surface as a broken pipe or a cut-short decode: say it was cancelled.
    o.signal?.throwIfAborted();
    throw err;
  }
}

export async function stop(...processes: (MediaProcess | FedProcess)[]): Promise<void> {
  for (const p of processes) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(processes.map((p) => p.done.catch(() => undefined)));
}

export async function finishDecoder(decoder: MediaProcess, file: string, signal?: AbortSignal): Promise<void> {
  const { code, stderr } = await decoder.done;
  signal?.throwIfAborted();
  if (code !== 0) throw new DrmError('BAD_REQUEST', `could not decode the audio of ${path.basename(file)}: ${lastLine(stderr)}`);
}

interface StreamShape {
  sampleRate: number;
  channels: number;
  totalSeconds: number;
}

/**
 * Decoder stdout → 10-s segments → marked samples → encoder stdin. Reading pauses while a write
 * waits for the encoder, so only one segment (in a few working copies) and a pipe's worth of
 * samples are ever in memory.
 */
async function markStream(
  o: MusicEmbedOptions,
  bits: string,
  decoder: MediaProcess,
  encoder: FedProcess,
  shape: StreamShape,
): Promise<{ segments: number; signal: number; mark: number }> {
  const segmentBytes = SEGMENT_SECONDS * shape.sampleRate * shape.channels * 4;
  let segment = 0;
  const totals = { signal: 0, mark: 0 };
  for await (const bytes of fixedRecords(decoder.child.stdout as AsyncIterable<Buffer>, segmentBytes)) {
    o.signal?.throwIfAborted();
    const whole = bytes.length - (bytes.length % (4 * shape.channels));
    if (whole === 0) break;
    const samples = new Float32Array(bytes.buffer, bytes.byteOffset, whole / 4);
    await writeSamples(encoder, markSegment(samples, shape, o, bits, segment, totals), o.output);
    segment++;
    const done = segment * SEGMENT_SECONDS;
    o.onProgress?.(Math.min(done, shape.totalSeconds || done), shape.totalSeconds || done);
  }
  o.signal?.throwIfAborted();
  return { segments: segment, ...totals };
}

function markSegment(
  samples: Float32Array,
  shape: StreamShape,
  o: MusicEmbedOptions,
  bits: string,
  segment: number,
  totals: { signal: number; mark: number },
): Float32Array {
  const planes = deinterleave(samples, shape.channels);
  const delta = musicSegmentDelta(planes, shape.sampleRate, o.key, o.contentId, segment);
  const sign = variantFor(bits, segment) === 'A' ? 1 : -1;
  totals.signal += planes.reduce((s, c) => s + energy(c), 0);
  totals.mark += shape.channels * energy(delta);
  return interleave(planes.map((c) => addScaled(c, delta, sign)));
}

async function writeSamples(encoder: FedProcess, samples: Float32Array, output: string): Promise<void> {
  try {
    await encoder.write(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
  } catch {
    const end = await encoder.done;
    throw new DrmError('BAD_REQUEST', `could not write ${output}: ${lastLine(end.stderr)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Detection

export interface MusicDetectOptions {
  bins: MediaBinaries;
  key: Buffer;
  contentId: string;
  leak: string;
  original: string;
  onProgress?: (doneSeconds: number, totalSeconds: number) => void;
  signal?: AbortSignal;
}

/** A segment the leak covers for less than this is not scored: too few tiles to say anything. */
export const MIN_COVERAGE_SECONDS = 2;

/**
 * The leak must line up with the original this clearly. Measured: a leak of this original
 * correlates 0.7–1.0 with a peak 10–34 robust deviations above the other lags (3-s excerpts,
 * MP3, AAC 64k, resampling); other music reached 0.24 and 4.6 at best, over 3-s excerpts.
 */
const MIN_ENVELOPE_CORRELATION = 0.4;
const MIN_PEAK_Z = 6;
/** and the waveforms must agree once aligned to the sample (about 0.98 and up for a true leak, near 0 otherwise) */
const MIN_WAVEFORM_CORRELATION = 0.3;

/** How far (seconds) the sample-exact search looks around the envelope's lag. */
const FINE_RANGE_SECONDS = 0.04;

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

interface AlignedStreams {
  sampleRate: number;
  /** original index = leak index + lag (samples, from the envelopes) */
  lag: number;
  originalSamples: number;
  leakSamples: number;
}

interface ScoredSegment {
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
async function scoreSegments(o: MusicDetectOptions, a: AlignedStreams): Promise<ScoredSegment[]> {
  const { sampleRate, originalSamples } = a;
  const original = new SampleWindow(monoPcm(o.bins, o.original, { sampleRate, signal: o.signal })[Symbol.asyncIterator]());
  const leak = new SampleWindow(monoPcm(o.bins, o.leak, { sampleRate, signal: o.signal })[Symbol.asyncIterator]());
  const range = Math.round(FINE_RANGE_SECONDS * sampleRate);
  const segmentLength = SEGMENT_SECONDS * sampleRate;
  const out: ScoredSegment[] = [];
  let lastGood = 0;
  try {
    for (let s = 0; s * segmentLength < originalSamples; s++) {
      const s0 = s * segmentLength;
      const s1 = Math.min(s0 + segmentLength, originalSamples);
      const c0 = Math.max(s0, a.lag);
      const c1 = Math.min(s1, a.lag + a.leakSamples);
      if (c1 - c0 >= MIN_COVERAGE_SECONDS * sampleRate) {
        const segment: Span = { samples: await original.span(s0, s1), start: s0 };
        const window: Span = { samples: await leak.span(c0 - a.lag - range, c1 - a.lag + range), start: c0 - a.lag - range };
        const found = fineAlign(segment.samples.subarray(c0 - s0, c1 - s0), window.samples, range);
        const trusted = found.correlation >= MIN_WAVEFORM_CORRELATION;
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
  let ol = 0;
  let oo = 0;
  for (let n = c0; n < c1; n++) {
    const x = samples[n - start] as number;
    ol += x * leakAt(n);
    oo += x * x;
  }
  const gain = oo > 0 ? ol / oo : 0;
  const coverage = Math.max(0, c1 - c0) / a.sampleRate;
  // A leak that is silent (or inverted) where the original plays has nothing to score.
  if (!(gain > 1e-3)) return { lag, ol, oo, reading: { index, z: 0, bit: '?', coverage } };
  const suspect = Float32Array.from(samples);
  for (let n = c0; n < c1; n++) suspect[n - start] = leakAt(n) / gain;
  const pattern = segmentPattern(o.key, o.contentId, index, samples.length, a.sampleRate);
  const z = musicScore(samples, suspect, a.sampleRate).z(pattern);
  return { lag, ol, oo, reading: { index, z, bit: bitFromZ(z), coverage } };
}
