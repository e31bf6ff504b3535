import { identificationBound, type LevelCensus, othersThan } from '../../src/domain/forensics/matching/id-levels.js';
import { matchPackedCandidates, STRONG_BELOW } from '../../src/domain/forensics/matching/matching.js';
import type { PackedCandidates } from '../../src/domain/forensics/matching/packed-ids.js';
import { FIXED_RULE, keyedRule, positionOf, type SegmentRule } from '../../src/watermark/segment-rule.js';
import type { Population } from '../framing/populations.js';
import { makeLeak } from './leaks.js';

// The shortest leak from which an honest strong_match names its viewer. The identification figure
// depends on the positions a leak decides and on the population, not on who leaked: a leak of L
// consecutive segments from start s can be strong only once the figure over the positions those L
// segments carry is at most 10^-6. That length is found from the figure alone, under a keyed rule
// of the leaker's own content and, for comparison, under the fixed rule of older content (where
// consecutive segments carry consecutive positions, an information set of every code); the real
// matcher then confirms the keyed one on the leaker's reading: strong at that length, not strong one
// segment shorter.

const STARTS = [0, 9, 17, 26, 33];
const LONGEST = 60;

export interface Shortest {
  leakers: number;
  median: number | undefined;
  p95: number | undefined;
  max: number | undefined;
  /** the same under the fixed rule of content ingested before rules were keyed */
  fixed: { median: number | undefined; p95: number | undefined; max: number | undefined };
  /** leaks checked with the real matcher, and how many were strong at the length and not one shorter */
  checked: number;
  confirmed: number;
}

function lengthFor(counts: readonly number[], start: number, rule: SegmentRule): number | undefined {
  for (let length = 1; length <= LONGEST; length++) {
    const positions = [...new Set(Array.from({ length }, (_, i) => positionOf(rule, start + i)))];
    if (identificationBound(counts, positions) <= STRONG_BELOW) return length;
  }
  return undefined;
}

const at = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];

export function shortestHonest(
  p: Population,
  candidates: PackedCandidates,
  census: LevelCensus,
  leakers: number,
  strengths: readonly number[],
): Shortest {
  const found: number[] = [];
  const fixed: number[] = [];
  let checked = 0;
  let confirmed = 0;
  for (let k = 0; k < leakers; k++) {
    const leaker = Math.floor(Math.random() * p.ids.length);
    const counts = othersThan(census, leaker);
    const rule = keyedRule(Buffer.from(`shortest ${k} ${Math.random()}`), 'bench');
    for (const start of STARTS) {
      const before = lengthFor(counts, start, FIXED_RULE);
      if (before !== undefined) fixed.push(before);
      const length = lengthFor(counts, start, rule);
      if (length === undefined) continue;
      found.push(length);
      // the leaker's copy from `start`, read as the detector would, cut to the length and one shorter
      const reading = makeLeak('single', length, [p.ids[leaker] as bigint], strengths, rule, start).segments;
      const options = { mask: p.mask, rule, census };
      const full = matchPackedCandidates(reading, candidates, options);
      const shorter = length > 1 ? matchPackedCandidates(reading.slice(0, -1), candidates, options) : undefined;
      checked++;
      if (
        full.classification === 'strong_match' &&
        full.matched?.viewerId === String(leaker) &&
        shorter?.classification !== 'strong_match'
      )
        confirmed++;
    }
  }
  found.sort((a, b) => a - b);
  fixed.sort((a, b) => a - b);
  return {
    leakers,
    median: at(found, 0.5),
    p95: at(found, 0.95),
    max: found.at(-1),
    fixed: { median: at(fixed, 0.5), p95: at(fixed, 0.95), max: fixed.at(-1) },
    checked,
    confirmed,
  };
}
