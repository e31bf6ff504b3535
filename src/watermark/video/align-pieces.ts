import { dot, pickNear, type TimeAlignment } from './align.js';

/**
 * Each part of a leak found in the original on its own. One global offset lines up a leak that
 * was only cut at its ends; a pirate who reorders, drops or repeats segments, or re-times the film
 * by a few percent, leaves most of it off that line. After the global alignment, the leak is cut
 * into pieces of PIECE_FRAMES, and each piece takes the start and speed (SPEEDS) that fit its
 * pictures best: first near where the piece before it says it should be (the first piece: near
 * the global offset), so that a film re-timed by up to 10% is followed piece by piece; a piece that
 * looks like nothing there (mean signature correlation below MATCH: a cut to another part) is
 * searched over the whole original, whole or in halves. The near search costs little; a whole
 * search is one pass over the original's signatures per speed (about 20 ms for a 3-minute
 * original, 70 ms for 10 minutes, on one core), paid only where the pirate cut.
 */

/**
 * A piece spans this many original frames of the leak (3 s at 25 fps): short enough to sit inside a 10-s segment
 * mostly.
 */
export const PIECE_FRAMES = 75;

/**
 * Playback speeds searched for a piece: ±10% in steps that the per-sample refinement (±3 frames) covers over a piece.
 */
export const SPEEDS = [0.9, 0.95, 1, 1.05, 1.1];

/**
 * A piece is taken where its best place correlates at least this well on average (the same pictures, not just similar
 * ones).
 */
const MATCH = 0.7;

/**
 * A place elsewhere is taken over the one near the prediction only when its pictures fit better by this much: where
 * the pictures barely change (a still, a slow pan) every place fits about as well, and the prediction decides. A fixed
 * "sure" level (0.9 near the prediction: look no further) did not carry over to other footage: on a slow zoom over a
 * photograph, the piece after a span cut out fitted 0.965 where the piece before it predicted and 0.999 where it came
 * from, 3.4 s on, and the near place was kept.
 */
const CLEARLY_BETTER = 0.02;

/** How far the first piece may lie from the global offset, as a share of the leak's length (±10% speed, and some). */
const DRIFT = 0.12;

interface Place {
  start: number;
  speed: number;
  /** the mean correlation, less what the distance from the prediction costs */
  score: number;
  /** the mean correlation alone */
  fit: number;
}

/**
 * The best start and speed of the samples `ks` (their positions relative to the first), starts in
 * [from, to]. A start or a speed away from the prediction pays a little, so that where the pictures
 * barely change (a still, a slow pan) the piece stays where the prediction put it.
 */
function bestPlace(
  ks: readonly number[],
  time: TimeAlignment,
  leak: readonly Float32Array[],
  original: readonly Float32Array[],
  from: number,
  to: number,
): Place {
  const first = time.positions[ks[0] as number] as number;
  const expected = time.predicted[ks[0] as number] as number;
  let best: Place = { start: -1, speed: 1, score: -2, fit: -2 };
  for (const speed of SPEEDS) {
    const rel = ks.map((k) => Math.round(((time.positions[k] as number) - first) * speed));
    const span = rel[rel.length - 1] as number;
    for (let start = Math.max(0, from); start <= to && start + span < original.length; start++) {
      let sum = 0;
      for (let j = 0; j < ks.length; j++)
        sum += dot(leak[ks[j] as number] as Float32Array, original[start + (rel[j] as number)] as Float32Array);
      const fit = sum / ks.length;
      const score = fit - 1e-4 * Math.abs(start - expected) - 1e-3 * Math.abs(speed - 1);
      if (score > best.score) best = { start, speed, score, fit };
    }
  }
  return best;
}

/**
 * Consecutive samples whose signatures correlate below this are either side of a cut (a pirate's
 * splice, or the film's own): measured 0.99 between samples of one shot, 0.53 down to −0.36 across
 * the splices of a copy in reverse order. A piece never spans one: placed by its larger part, a
 * piece across a splice put the frames of the other part 8 frames off, and two segments read
 * |z| 5 and 15 instead of 14 and 15.
 */
const CUT = 0.8;

/** The leak's samples cut into pieces of PIECE_FRAMES by their positions, and at every cut. */
function piecesOf(positions: Int32Array, leak: readonly Float32Array[]): number[][] {
  const pieces: number[][] = [];
  let current: number[] = [];
  for (let k = 0; k < positions.length; k++) {
    const long =
      current.length > 0 && (positions[k] as number) - (positions[current[0] as number] as number) >= PIECE_FRAMES;
    const cut = k > 0 && dot(leak[k] as Float32Array, leak[k - 1] as Float32Array) < CUT;
    if (current.length > 0 && (long || cut)) {
      pieces.push(current);
      current = [];
    }
    current.push(k);
  }
  if (current.length > 0) pieces.push(current);
  return pieces;
}

/**
 * The alignment with every piece placed on its own: first near where the global offset puts it
 * (within DRIFT of the time elapsed, for a film re-timed by up to 10%), then, for a piece that fits
 * nowhere near, anywhere in the original (a reordered, dropped or repeated part).
 */
export function realignPieces(
  time: TimeAlignment,
  leak: readonly Float32Array[],
  original: readonly Float32Array[],
  slack = 3,
): TimeAlignment {
  const frameMap = Int32Array.from(time.frameMap);
  const predicted = Int32Array.from(time.predicted);
  const apply = (ks: readonly number[], found: Place) => {
    const first = time.positions[ks[0] as number] as number;
    for (const k of ks) {
      predicted[k] = found.start + Math.round(((time.positions[k] as number) - first) * found.speed);
      frameMap[k] = pickNear(leak[k] as Float32Array, original, predicted[k] as number, slack);
    }
  };
  const anywhere = (ks: number[], halves: number): void => {
    if (ks.length < 3) return;
    const found = bestPlace(ks, time, leak, original, 0, original.length);
    if (found.fit >= MATCH) apply(ks, found);
    // a piece across a cut (two segments swapped) fits nowhere whole: each half may
    else if (halves > 0)
      for (const half of [ks.slice(0, ks.length >> 1), ks.slice(ks.length >> 1)]) anywhere(half, halves - 1);
  };
  // Where the next piece should start if the film runs on as the last piece placed did.
  let track: { position: number; start: number; speed: number } | null = null;
  const span = (time.positions[time.positions.length - 1] as number) - (time.positions[0] as number);
  for (const ks of piecesOf(time.positions, leak)) {
    if (ks.length < 3) continue;
    const position = time.positions[ks[0] as number] as number;
    const [at, reach] = track
      ? [track.start + Math.round((position - track.position) * track.speed), PIECE_FRAMES / 3]
      : [time.predicted[ks[0] as number] as number, Math.max(PIECE_FRAMES / 3, DRIFT * span)];
    const near = bestPlace(ks, time, leak, original, Math.round(at - reach), Math.round(at + reach));
    // Looked for in the whole original too (a pass per speed, some 20 ms for 3 minutes of original), unless it fits so
    // well near by that nothing can fit clearly better: most pieces of a leak cost only the near search.
    const whole = near.fit >= 1 - CLEARLY_BETTER ? near : bestPlace(ks, time, leak, original, 0, original.length);
    const found = whole.fit > near.fit + CLEARLY_BETTER ? whole : near;
    if (found.fit >= MATCH) {
      apply(ks, found);
      track = { position, start: found.start, speed: found.speed };
    } else {
      anywhere(ks, 2);
      track = null;
    }
  }
  return { ...time, frameMap, predicted };
}
