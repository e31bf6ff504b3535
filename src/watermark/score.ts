/**
 * The calibrated score shared by the video and music marks. m holds, per marked coefficient or
 * tile, how much the suspect grew where the mark was strong. For a key independent of the suspect
 * the pattern entries are fair independent signs, so S = Σ p·m has mean 0 and variance exactly
 * Σ m², whatever the content or the attack: z = S / √(Σ m²) needs no estimated null.
 */
export function calibratedZ(pattern: Float32Array, m: Float64Array): number {
  if (pattern.length !== m.length) throw new Error('pattern length does not match the segment');
  let sum = 0;
  let energy = 0;
  for (let i = 0; i < m.length; i++) {
    const v = m[i] as number;
    sum += (pattern[i] as number) * v;
    energy += v * v;
  }
  return energy === 0 ? 0 : sum / Math.sqrt(energy);
}

/** Positive z reads variant A, negative B; a segment whose |z| is below the threshold stays undecided. */
export function bitFromZ(z: number, threshold = 4): '0' | '1' | '?' {
  if (z >= threshold) return '0';
  if (z <= -threshold) return '1';
  return '?';
}
