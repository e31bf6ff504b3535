import { type CoarseAlignment, coarseAlign, onsetFeature } from './align.js';

/**
 * A pirate often plays music faster or slower: by resampling (speed and pitch change together, as
 * "sped up" and "nightcore" copies do) or by a time stretch that keeps the pitch. Either way the
 * leak's onsets drift against the original's by the speed difference, and past a percent or two
 * no single offset lines them up. The speed is found on the envelopes: the leak's block energies
 * are stretched onto the original's time base for each speed from 0.90 to 1.10 (0.5% apart, then
 * 0.05% apart around the best), and the one whose onsets correlate best wins. A 0.05% step leaves
 * at most 2.5 ms of drift over a 10-s segment, well inside the sample-exact search of each one.
 */

export const SLOWEST = 0.9;
export const FASTEST = 1.1;

export interface SpeedFit {
  /** the leak plays this many times as fast as the original */
  factor: number;
  alignment: CoarseAlignment;
}

/** The leak's block energies on the original's time base, for a leak played `factor` times as fast. */
export function stretched(energies: Float64Array, factor: number): Float64Array {
  const n = Math.max(0, Math.floor((energies.length - 1) * factor));
  const out = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    // original time k blocks is leak time k / factor blocks
    const at = k / factor;
    const i = Math.floor(at);
    const t = at - i;
    out[k] = (energies[i] as number) * (1 - t) + (energies[Math.min(energies.length - 1, i + 1)] as number) * t;
  }
  return out;
}

/** The speed (within 0.9–1.1) at which the leak's onsets line up best with the original's. */
export function leakSpeed(originalFeature: Float64Array, leakEnergies: Float64Array): SpeedFit {
  const atSpeed = (factor: number): SpeedFit => ({
    factor,
    alignment: coarseAlign(originalFeature, onsetFeature(stretched(leakEnergies, factor))),
  });
  const better = (a: SpeedFit, b: SpeedFit) => (b.alignment.correlation > a.alignment.correlation ? b : a);
  let best = atSpeed(1);
  for (let f = SLOWEST; f <= FASTEST + 1e-9; f += 0.005) best = better(best, atSpeed(Math.round(f * 1000) / 1000));
  const coarse = best.factor;
  for (let f = coarse - 0.0025; f <= coarse + 0.0025 + 1e-9; f += 0.0005)
    best = better(best, atSpeed(Math.round(f * 10000) / 10000));
  return best;
}

/**
 * The two ways of undoing a speed, as ffmpeg audio filters on the leak: read its samples at a
 * rate `factor` times lower (undoes a resampled copy, pitch and all), or stretch its time by
 * `factor` keeping the pitch (undoes a time stretch). `leakRate` is the leak's own sample rate.
 */
export interface SpeedUndoing {
  pitchKept: boolean;
  filter: string;
}

export function speedUndoings(factor: number, leakRate: number): SpeedUndoing[] {
  return [
    { pitchKept: false, filter: `asetrate=${Math.round(leakRate / factor)}` },
    { pitchKept: true, filter: `atempo=${(1 / factor).toFixed(6)}` },
  ];
}
