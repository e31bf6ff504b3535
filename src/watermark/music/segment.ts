import { frameCount } from '../../../gpu/stft/stft.js';
import { DEFAULT_MUSIC_MARK, musicDelta, musicPattern, tileLayout } from './mark.js';

/**
 * One 10-s segment of music and its mark: the δ that variant A adds and B subtracts. Embedding
 * (./embed.ts), ingest's variants (./variants.ts) and detection (./detect-score.ts) all take
 * their patterns from here.
 */

/**
 * The mark stays at least this far below the music. With α = 0.04 on the 500 Hz – 5 kHz band
 * only music that lives almost wholly in that band comes near it; there δ is scaled down to
 * the limit, which weakens the mark but keeps its sign, so detection is unchanged in kind.
 */
export const MIN_SNR_DB = 30;

/** The mono mix of planar channels: what a mono downmix of the marked copy will hold. */
function monoMix(channels: readonly Float32Array[]): Float32Array {
  const length = channels[0]?.length ?? 0;
  const out = new Float32Array(length);
  for (const c of channels) for (let i = 0; i < length; i++) out[i] = (out[i] as number) + (c[i] as number);
  const scale = 1 / Math.max(1, channels.length);
  for (let i = 0; i < length; i++) out[i] = (out[i] as number) * scale;
  return out;
}

export const energy = (v: ArrayLike<number>) => {
  let e = 0;
  for (let i = 0; i < v.length; i++) e += (v[i] as number) ** 2;
  return e;
};

/** The pattern of a segment of the given length in samples. */
export function segmentPattern(
  key: Buffer,
  contentId: string,
  segment: number,
  length: number,
  sampleRate: number,
): Float32Array {
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

export function addScaled(x: Float32Array, delta: Float32Array, sign: 1 | -1): Float32Array {
  const out = new Float32Array(x.length);
  for (let i = 0; i < x.length; i++) out[i] = (x[i] as number) + sign * (delta[i] as number);
  return out;
}
