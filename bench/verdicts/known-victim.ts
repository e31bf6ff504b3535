import { type SegmentRule, servedBit } from '../../src/watermark/segment-rule.js';
import { ID_BITS } from '../../src/watermark/segments.js';
import { agreeingOn, type Population } from '../framing/populations.js';
import { draw, gauss, idString, type LeakSegment, lengthIn } from './leaks.js';

// Colluders who know a victim's A/B pattern from another film. Three viewers compare their own copies
// of film X with a victim's copy of X, then splice their copies of film Y (the content analysed) to
// what they learned. Each of them sees which of them were served alike on every segment of X and of
// Y (their own copies), and on X which of them the victim was served like.
//
// - Under one rule for every film, their patterns on X and Y agree phase for phase, and they copy the
//   victim's pattern wherever one of them was served it: a victim who agrees with them wherever all
//   three agree is spelled exactly, and named.
// - Under keyed rules each film shuffles the positions and flips variants. What carries over is the
//   class of each phase (which of them were served alike: the flip cancels between them) and, per
//   class, how often the victim sided with each side on X. They take within each class of Y the side
//   the victim took most often on X: the best a coalition of three can do with what it knows.

export interface KnownVictim {
  colluders: number[];
  victim: number;
  segments: LeakSegment[];
}

/** A coalition of three and a victim who agrees with all three wherever they agree: the easiest to frame. */
export function framableVictim(p: Population, tries = 100_000): { colluders: number[]; victim: number } {
  for (let t = 0; t < tries; t++) {
    const colluders = draw(3, p.ids.length);
    const [a, b, c] = colluders.map((i) => p.ids[i] as bigint) as [bigint, bigint, bigint];
    const agree = ~(a ^ b) & ~(a ^ c) & ((1n << BigInt(ID_BITS)) - 1n);
    const victims = agreeingOn(p, a, agree).filter((v) => !colluders.includes(v));
    if (victims.length > 0) return { colluders, victim: victims[Math.floor(Math.random() * victims.length)] as number };
  }
  throw new Error(`no framable victim among ${p.ids.length} viewers in ${tries} coalitions`);
}

/** Which colluders were served like colluder 0 on a segment: the class of its phase, the same under any rule. */
const classOf = (served: readonly (0 | 1)[]) =>
  served.reduce<number>((k, bit, i) => k | ((bit ^ (served[0] as number)) << i), 0);

/** Per class of X: how often the victim was served like colluder 0 (0) or unlike (1). */
function victimSides(ids: readonly string[], victim: string, x: SegmentRule): Map<number, [number, number]> {
  const sides = new Map<number, [number, number]>();
  for (let phase = 0; phase < ID_BITS; phase++) {
    const served = ids.map((id) => servedBit(x, id, phase));
    const unlike = servedBit(x, victim, phase) !== served[0];
    const [alike, other] = sides.get(classOf(served)) ?? [0, 0];
    sides.set(classOf(served), unlike ? [alike, other + 1] : [alike + 1, other]);
  }
  return sides;
}

/** Whether the colluders' own patterns on X and Y agree phase for phase: one rule for both films. */
const sameRule = (ids: readonly string[], x: SegmentRule, y: SegmentRule) =>
  Array.from({ length: ID_BITS }, (_, s) => s).every((s) =>
    ids.every((id) => servedBit(x, id, s) === servedBit(y, id, s)),
  );

/** The variant bit the colluders want on each segment of Y. */
function plan(ids: readonly string[], victim: string, x: SegmentRule, y: SegmentRule): (s: number) => 0 | 1 {
  if (sameRule(ids, x, y)) return (s) => servedBit(x, victim, s);
  const sides = victimSides(ids, victim, x);
  // ties are settled once per class, as a coalition would settle them
  const choice = new Map(
    [...sides].map(([k, [alike, unlike]]) => [
      k,
      alike === unlike ? Math.round(Math.random()) : alike > unlike ? 0 : 1,
    ]),
  );
  return (s) => {
    const served = ids.map((id) => servedBit(y, id, s));
    return ((served[0] as number) ^ (choice.get(classOf(served)) ?? 0)) as 0 | 1;
  };
}

/** The splice the colluders make of film Y, read as the detector reads it. */
export function spliceToVictim(
  p: Population,
  who: { colluders: number[]; victim: number },
  x: SegmentRule,
  y: SegmentRule,
  strengths: readonly number[],
): KnownVictim {
  const ids = who.colluders.map((c) => idString(p.ids[c] as bigint));
  const victim = idString(p.ids[who.victim] as bigint);
  const start = Math.floor(Math.random() * ID_BITS);
  const want = plan(ids, victim, x, y);
  const segments = Array.from({ length: lengthIn(30, 60) }, (_, i): LeakSegment => {
    const index = start + i;
    const source = ids.find((id) => servedBit(y, id, index) === want(index)) ?? (ids[0] as string);
    const strength = strengths[Math.floor(Math.random() * strengths.length)] as number;
    const z = (servedBit(y, source, index) === 0 ? 1 : -1) * strength + gauss();
    return { index, z, reach: strength, coverage: 10 };
  });
  return { ...who, segments };
}
