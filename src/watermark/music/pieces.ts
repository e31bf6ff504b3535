import { coarseAlign, ENVELOPE_RATE } from './align.js';

/**
 * A music leak whose parts were put in another order, dropped or repeated lines up with its
 * original at no single offset. Its onset feature is cut into pieces of PIECE_SECONDS, and each
 * piece is placed in the original on its own. Music repeats itself (a chorus comes back), so a
 * piece keeps the leak's overall offset wherever it fits there nearly as well as anywhere: it
 * moves only when another place fits clearly better (by MOVE_GAIN in correlation) and stands
 * out (MIN_PEAK_Z robust deviations), as a part cut from elsewhere does.
 */

const PIECE_SECONDS = 5;
const MOVE_GAIN = 0.25;
const MIN_PEAK_Z = 6;
const MIN_CORRELATION = 0.4;

/** Leak samples [leakStart, leakEnd) are original samples [leakStart + lag, leakEnd + lag). */
export interface Piece {
  leakStart: number;
  leakEnd: number;
  lag: number;
}

/** The normalized correlation of `part` with the original feature from block `at` (0 where they barely overlap). */
function correlationAt(original: Float64Array, part: Float64Array, at: number): number {
  let dot = 0;
  let aa = 0;
  let bb = 0;
  let n = 0;
  for (let i = 0; i < part.length; i++) {
    const j = at + i;
    if (j < 0 || j >= original.length) continue;
    const a = original[j] as number;
    const b = part[i] as number;
    dot += a * b;
    aa += a * a;
    bb += b * b;
    n++;
  }
  return n >= part.length / 2 && aa > 0 && bb > 0 ? dot / Math.sqrt(aa * bb) : 0;
}

/**
 * Each piece of the leak with its own lag (in samples), or undefined when every piece fits where
 * the overall offset puts it (the leak is one stretch of the original: the streaming path reads it).
 * `lagBlocks`: the overall offset in envelope blocks, or undefined where none lines the leak up
 * (then only the pieces that fit somewhere clearly are kept); `block`, `phase`: the leak grid's
 * block and phase in samples.
 */
export function placePieces(
  original: Float64Array,
  leak: Float64Array,
  lagBlocks: number | undefined,
  block: number,
  phase: number,
): Piece[] | undefined {
  const per = PIECE_SECONDS * ENVELOPE_RATE;
  const pieces: Piece[] = [];
  let moved = lagBlocks === undefined;
  for (let b = 0; b < leak.length; b += per) {
    const part = leak.subarray(b, Math.min(leak.length, b + per));
    let lag = lagBlocks;
    if (part.length >= per / 2) {
      const best = coarseAlign(original, part);
      const here = lagBlocks === undefined ? 0 : correlationAt(original, part, b + lagBlocks);
      const clear =
        best.peakZ >= MIN_PEAK_Z && best.correlation >= MIN_CORRELATION && best.correlation >= here + MOVE_GAIN;
      if (clear && best.lagBlocks - b !== lagBlocks) {
        lag = best.lagBlocks - b;
        moved = true;
      }
    }
    if (lag !== undefined)
      pieces.push({
        leakStart: b * block + phase,
        leakEnd: (b + part.length) * block + phase,
        lag: lag * block - phase,
      });
  }
  return moved ? pieces : undefined;
}

/** How many of the leak's samples its pieces place. */
export const placedSamples = (pieces: readonly Piece[]) =>
  pieces.reduce((sum, p) => sum + (p.leakEnd - p.leakStart), 0);
