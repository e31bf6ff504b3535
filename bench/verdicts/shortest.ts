import { identificationBound, type LevelCensus, othersThan } from '../../src/domain/forensics/matching/id-levels.js';
import { matchPackedCandidates, STRONG_BELOW } from '../../src/domain/forensics/matching/matching.js';
import type { PackedCandidates } from '../../src/domain/forensics/matching/packed-ids.js';
import { ID_BITS } from '../../src/watermark/segments.js';
import type { Population } from '../framing/populations.js';
import { makeLeak } from './leaks.js';

// The shortest leak from which an honest strong_match names its viewer. The identification figure
// depends on the positions a leak decides and on the population, not on who leaked: a leak of L
// consecutive segments from start s can be strong only once the figure over those L positions is at
// most 10^-6. That length is found from the figure alone, then the real matcher confirms it on the
// leaker's reading: strong at that length, not strong one segment shorter.

const STARTS = [0, 9, 17, 26, 33];
const LONGEST = 60;

export interface Shortest {
  leakers: number;
  median: number | undefined;
  p95: number | undefined;
  max: number | undefined;
  /** leaks checked with the real matcher, and how many were strong at the length and not one shorter */
  checked: number;
  confirmed: number;
}

function lengthFor(counts: readonly number[], start: number): number | undefined {
  for (let length = 1; length <= LONGEST; length++) {
    const positions = [...new Set(Array.from({ length }, (_, i) => (start + i) % ID_BITS))];
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
  let checked = 0;
  let confirmed = 0;
  for (let k = 0; k < leakers; k++) {
    const leaker = Math.floor(Math.random() * p.ids.length);
    const counts = othersThan(census, leaker);
    for (const start of STARTS) {
      const length = lengthFor(counts, start);
      if (length === undefined) continue;
      found.push(length);
      // the leaker's copy from `start`, read as the detector would, cut to the length and one shorter
      const reading = makeLeak('single', length, [p.ids[leaker] as bigint], strengths, start).segments;
      const options = { mask: p.mask, census };
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
  return { leakers, median: at(found, 0.5), p95: at(found, 0.95), max: found.at(-1), checked, confirmed };
}
