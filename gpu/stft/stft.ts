import FFT from 'fft.js';

/**
 * Short-time Fourier transform for the music watermark: analysis into frames of one-sided
 * spectra, and resynthesis by weighted overlap-add that gives back the input exactly (to
 * rounding) for any hop up to half the frame, so that a mark written into magnitudes is the only
 * change a round trip makes.
 *
 * Frames are centred: the signal is padded with frameSize/2 zeros on each side, so frame t is
 * centred on sample t·hop and every sample, the first and last included, lies well inside a window.
 */
export interface StftOptions {
  /** a power of two (fft.js) */
  frameSize: number;
  /** at most frameSize / 2 */
  hop: number;
}

export interface Spectrogram extends StftOptions {
  /** samples of the signal analysed */
  length: number;
  frames: number;
  /** frameSize / 2 + 1 */
  bins: number;
  /** frame-major: value of frame t, bin k at t·bins + k */
  re: Float64Array;
  im: Float64Array;
}

/** The periodic Hann window (sums to a constant under overlap-add at hop N/2 and N/4). */
export function hann(size: number): Float64Array {
  const w = new Float64Array(size);
  for (let n = 0; n < size; n++) w[n] = 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / size);
  return w;
}

function check({ frameSize, hop }: StftOptions): void {
  if (!Number.isInteger(frameSize) || frameSize < 4 || (frameSize & (frameSize - 1)) !== 0) {
    throw new Error(`frameSize must be a power of two of at least 4, got ${frameSize}`);
  }
  if (!Number.isInteger(hop) || hop < 1 || hop > frameSize / 2) {
    throw new Error(`hop must be a whole number from 1 to frameSize/2 (${frameSize / 2}), got ${hop}`);
  }
}

export const frameCount = (length: number, hop: number) => Math.floor(length / hop) + 1;

export function stft(signal: ArrayLike<number>, options: StftOptions): Spectrogram {
  check(options);
  const { frameSize: n, hop } = options;
  const half = n / 2;
  const bins = half + 1;
  const frames = frameCount(signal.length, hop);
  const window = hann(n);
  const fft = new FFT(n);
  const input = new Float64Array(n);
  const out = fft.createComplexArray() as number[];
  const re = new Float64Array(frames * bins);
  const im = new Float64Array(frames * bins);

  for (let t = 0; t < frames; t++) {
    const start = t * hop - half; // in signal coordinates; outside [0, length) reads as zero
    for (let i = 0; i < n; i++) {
      const s = start + i;
      input[i] = s >= 0 && s < signal.length ? (signal[s] as number) * (window[i] as number) : 0;
    }
    fft.realTransform(out, input);
    const base = t * bins;
    for (let k = 0; k < bins; k++) {
      re[base + k] = out[2 * k] as number;
      im[base + k] = out[2 * k + 1] as number;
    }
  }
  return { frameSize: n, hop, length: signal.length, frames, bins, re, im };
}

/** Weighted overlap-add: Σ w·ifft(X_t) / Σ w², the least-squares inverse of stft(). */
export function istft(spec: Spectrogram): Float64Array {
  check(spec);
  const { frameSize: n, hop, frames, bins, length } = spec;
  if (spec.re.length !== frames * bins || spec.im.length !== frames * bins) {
    throw new Error('spectrogram arrays do not match frames × bins');
  }
  const half = n / 2;
  const window = hann(n);
  const fft = new FFT(n);
  const full = fft.createComplexArray() as number[];
  const time = fft.createComplexArray() as number[];
  const sum = new Float64Array(length);
  const weight = new Float64Array(length);

  for (let t = 0; t < frames; t++) {
    const base = t * bins;
    // The other half of a real signal's spectrum is the mirror image, conjugated.
    for (let k = 0; k < bins; k++) {
      full[2 * k] = spec.re[base + k] as number;
      full[2 * k + 1] = spec.im[base + k] as number;
    }
    for (let k = bins; k < n; k++) {
      full[2 * k] = spec.re[base + n - k] as number;
      full[2 * k + 1] = -(spec.im[base + n - k] as number);
    }
    fft.inverseTransform(time, full);
    const start = t * hop - half;
    for (let i = 0; i < n; i++) {
      const s = start + i;
      if (s < 0 || s >= length) continue;
      const w = window[i] as number;
      sum[s] = (sum[s] as number) + w * (time[2 * i] as number);
      weight[s] = (weight[s] as number) + w * w;
    }
  }
  for (let s = 0; s < length; s++) sum[s] = (sum[s] as number) / (weight[s] as number);
  return sum;
}
