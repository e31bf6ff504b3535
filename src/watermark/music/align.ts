import FFT from 'fft.js';

/**
 * Time alignment of a leaked recording to its original, for the non-blind music detector. Two
 * stages, because a leak can start anywhere in a long original: a coarse offset from loudness
 * envelopes (100 values a second, so a whole track correlates in one small FFT and codecs,
 * resampling and gain changes barely touch them), then the exact sample from the waveforms
 * themselves over a few tens of milliseconds around it.
 */

const nextPow2 = (n: number) => 2 ** Math.ceil(Math.log2(Math.max(2, n)));

/**
 * c[k] = Σ_i x[i]·y[i + k] for k = 0 … lags − 1, through one FFT product. The FFT is long
 * enough that no lag wraps around onto the start of y.
 */
export function correlate(y: ArrayLike<number>, x: ArrayLike<number>, lags: number): Float64Array {
  const size = nextPow2(Math.max(y.length, x.length + lags - 1));
  const fft = new FFT(size);
  const spectrum = (v: ArrayLike<number>) => {
    const input = new Float64Array(size);
    for (let i = 0; i < v.length; i++) input[i] = v[i] as number;
    const out = fft.createComplexArray() as number[];
    fft.realTransform(out, input);
    fft.completeSpectrum(out);
    return out;
  };
  const fy = spectrum(y);
  const fx = spectrum(x);
  // Y·conj(X) is the transform of the correlation.
  for (let k = 0; k < size; k++) {
    const yr = fy[2 * k] as number;
    const yi = fy[2 * k + 1] as number;
    const xr = fx[2 * k] as number;
    const xi = fx[2 * k + 1] as number;
    fy[2 * k] = yr * xr + yi * xi;
    fy[2 * k + 1] = yi * xr - yr * xi;
  }
  const time = fft.createComplexArray() as number[];
  fft.inverseTransform(time, fy);
  const out = new Float64Array(lags);
  for (let k = 0; k < lags; k++) out[k] = time[2 * k] as number;
  return out;
}

/** Envelope blocks per second: 10-ms blocks resolve an onset well inside one STFT hop of the mark. */
export const ENVELOPE_RATE = 100;

export const envelopeBlock = (sampleRate: number) => Math.max(1, Math.round(sampleRate / ENVELOPE_RATE));

/** Energy per block of a stream of samples, fed in pieces of any size. */
export class EnvelopeMeter {
  private readonly energies: number[] = [];
  private partial = 0;
  private inBlock = 0;
  private count = 0;

  constructor(readonly block: number) {}

  add(samples: Float32Array): void {
    for (let i = 0; i < samples.length; i++) {
      const v = samples[i] as number;
      this.partial += v * v;
      if (++this.inBlock === this.block) {
        this.energies.push(this.partial);
        this.partial = 0;
        this.inBlock = 0;
      }
    }
    this.count += samples.length;
  }

  /** samples seen so far */
  get length(): number {
    return this.count;
  }

  /** energies of the whole blocks (a last partial block is dropped) */
  get blocks(): Float64Array {
    return Float64Array.from(this.energies);
  }
}

/**
 * The feature that is correlated: the change of log-energy from block to block. Logarithms make
 * it blind to a gain change; differences make it peak at onsets, so the correlation peak is
 * sharp instead of as broad as a loudness swell. The floor, relative to the file's own mean
 * energy, keeps codec noise in near-silence from dominating.
 */
export function onsetFeature(energies: Float64Array): Float64Array {
  let mean = 0;
  for (const e of energies) mean += e;
  mean /= Math.max(1, energies.length);
  const floor = 1e-4 * mean + 1e-20;
  const out = new Float64Array(energies.length);
  let previous = Math.log((energies[0] ?? 0) + floor);
  for (let t = 1; t < energies.length; t++) {
    const current = Math.log((energies[t] as number) + floor);
    out[t] = current - previous;
    previous = current;
  }
  return out;
}

export interface CoarseAlignment {
  /** the leak's block 0 lies at this block of the original (negative: the leak starts earlier) */
  lagBlocks: number;
  /** normalised correlation of the features over the overlap at that lag */
  correlation: number;
  /** how far the peak stands above the correlation at all other lags, in robust standard deviations */
  peakZ: number;
}

const cumulativeSquares = (v: Float64Array) => {
  const out = new Float64Array(v.length + 1);
  for (let i = 0; i < v.length; i++) out[i + 1] = (out[i] as number) + (v[i] as number) ** 2;
  return out;
};

function median(values: Float64Array): number {
  const sorted = Float64Array.from(values).sort();
  return sorted.length === 0 ? 0 : (sorted[Math.floor(sorted.length / 2)] as number);
}

/**
 * The lag of the best normalised correlation between the original's and the leak's features.
 * Only lags where the two overlap by at least half the shorter one (and 3 s where there is that
 * much) count: a short overlap can correlate well by chance.
 */
export function coarseAlign(original: Float64Array, leak: Float64Array): CoarseAlignment {
  const no = original.length;
  const nl = leak.length;
  const shorter = Math.min(no, nl);
  const minOverlap = Math.max(1, Math.min(shorter, Math.max(3 * ENVELOPE_RATE, Math.ceil(shorter / 2))));
  // Pad the original in front so that negative lags become indices too.
  const padded = new Float64Array(nl - 1 + no);
  padded.set(original, nl - 1);
  const c = correlate(padded, leak, no + nl - 1);
  const so = cumulativeSquares(original);
  const sl = cumulativeSquares(leak);
  const rho = new Float64Array(c.length).fill(Number.NaN);
  let best = -1;
  for (let k = 0; k < c.length; k++) {
    const lag = k - (nl - 1);
    const from = Math.max(0, -lag);
    const to = Math.min(nl, no - lag);
    if (to - from < minOverlap) continue;
    const energy =
      ((so[to + lag] as number) - (so[from + lag] as number)) * ((sl[to] as number) - (sl[from] as number));
    rho[k] = energy > 0 ? (c[k] as number) / Math.sqrt(energy) : 0;
    if (best < 0 || (rho[k] as number) > (rho[best] as number)) best = k;
  }
  if (best < 0) return { lagBlocks: 0, correlation: 0, peakZ: 0 };
  const valid = rho.filter((v) => !Number.isNaN(v));
  const centre = median(valid);
  const spread = 1.4826 * median(valid.map((v) => Math.abs(v - centre))) || 1e-12;
  const peak = rho[best] as number;
  return { lagBlocks: best - (nl - 1), correlation: peak, peakZ: (peak - centre) / spread };
}

/**
 * Refines a coarse guess to the sample. leak holds the samples the guess lines up with original,
 * widened by range samples on each side; the answer is the shift from the guess (original[i]
 * matches leak[i + range + lag]) and the normalised correlation of the waveforms there: near 1
 * for this original through any codec that keeps the waveform, near 0 for other audio.
 */
export function fineAlign(
  original: Float32Array,
  leak: Float32Array,
  range: number,
): { lag: number; correlation: number } {
  const lags = 2 * range + 1;
  if (leak.length < original.length + 2 * range)
    throw new Error('the leak window must extend range samples past the original on both sides');
  const c = correlate(leak, original, lags);
  let best = 0;
  for (let k = 1; k < lags; k++) if ((c[k] as number) > (c[best] as number)) best = k;
  let eo = 0;
  let el = 0;
  for (let i = 0; i < original.length; i++) {
    eo += (original[i] as number) ** 2;
    el += (leak[i + best] as number) ** 2;
  }
  const correlation = eo > 0 && el > 0 ? (c[best] as number) / Math.sqrt(eo * el) : 0;
  return { lag: best - range, correlation };
}
