import { identificationBound, type LevelCensus, othersThan } from '../../src/domain/forensics/matching/id-levels.js';
import { matchPackedCandidates } from '../../src/domain/forensics/matching/matching.js';
import type { PackedCandidates } from '../../src/domain/forensics/matching/packed-ids.js';
import { keyedRule } from '../../src/watermark/segment-rule.js';
import { ID_BITS } from '../../src/watermark/segments.js';
import type { Population } from '../framing/populations.js';
import { draw, gauss, lengthIn, signOf } from './leaks.js';

// Coalitions that search for the splice that best fits some innocent, as an offline search with the
// truth in hand would: each coalition tries many splices (each segment from one of its members) and
// keeps any whose verdict has exactly one candidate fitting every decided bit, an innocent. Each such
// verdict claims, in its identification figure, a bound on the chance that the one who fits is
// innocent; summed over the verdicts where one candidate alone fit, that is how many lone innocents
// the figure allows. Counted here against how many there were.

export interface ChosenSplices {
  coalitions: number;
  splices: number;
  /** splices whose verdict had exactly one candidate fitting every decided bit */
  loneFits: number;
  /** of those, how many were no member of the coalition */
  loneInnocents: number;
  /** the sum of the identification figure over the lone fits: the lone innocents the figure allows */
  predicted: number;
  /** the chance of seeing as many lone innocents or more, were their number Poisson with the predicted mean */
  pValue: number;
  /** the lone innocents' strongest verdicts */
  strongInnocents: number;
  /** the bound on innocents fitting, over the viewers outside the coalition, summed over every splice tried */
  allowedOverAll: number;
  /** splices where some innocent fit every decided bit (lone or not): what that sum bounds */
  innocentFits: number;
  /** coalitions with at least one such splice: the tries of one coalition share its window and its members */
  coalitionsWithInnocents: number;
}

const fitsReadout = (readout: string, id: bigint) =>
  [...readout].every((bit, b) => bit === '?' || Number(bit) === Number((id >> BigInt(b)) & 1n));

/** P(X ≥ k) for X Poisson with mean m. */
export function poissonTail(k: number, m: number): number {
  if (k <= 0) return 1;
  let term = Math.exp(-m);
  let below = term;
  for (let i = 1; i < k; i++) {
    term *= m / i;
    below += term;
  }
  return Math.max(0, 1 - below);
}

export function chosenSplices(
  p: Population,
  candidates: PackedCandidates,
  census: LevelCensus,
  options: { coalitions: number; perCoalition: number; size: 2 | 3; strengths: readonly number[] },
): ChosenSplices {
  const found = {
    loneFits: 0,
    loneInnocents: 0,
    predicted: 0,
    strongInnocents: 0,
    allowedOverAll: 0,
    innocentFits: 0,
    coalitionsWithInnocents: 0,
  };
  for (let k = 0; k < options.coalitions; k++) {
    const coalition = draw(options.size, p.ids.length);
    const innocents = othersThan(census, ...coalition);
    let hit = false;
    const words = coalition.map((c) => p.ids[c] as bigint);
    const rule = keyedRule(Buffer.from(`chosen ${k} ${Math.random()}`), 'bench');
    const length = lengthIn(10, 40);
    const start = Math.floor(Math.random() * ID_BITS);
    for (let t = 0; t < options.perCoalition; t++) {
      const segments = Array.from({ length }, (_, i) => {
        const strength = options.strengths[Math.floor(Math.random() * options.strengths.length)] as number;
        const source = words[Math.floor(Math.random() * words.length)] as bigint;
        return { index: start + i, z: signOf(rule, source, start + i) * strength + gauss() };
      });
      const r = matchPackedCandidates(segments, candidates, { mask: p.mask, rule, census });
      if (r.decidedBits === 0) continue;
      // the bound on innocents fitting counts every viewer outside the coalition (a verdict's own figure leaves out
      // the one it would name, who may be the innocent that fits)
      const decided = [...r.readout].flatMap((bit, b) => (bit === '?' ? [] : [b]));
      found.allowedOverAll += identificationBound(innocents, decided);
      const colludersFitting = coalition.filter((c) => fitsReadout(r.readout, p.ids[c] as bigint)).length;
      if (r.fitting > colludersFitting) {
        found.innocentFits++;
        hit = true;
      }
      if (r.fitting !== 1) continue;
      const lone = r.matched?.viewerId ?? r.candidateSet[0]?.viewerId;
      found.loneFits++;
      found.predicted += r.identificationProbability;
      if (lone !== undefined && !coalition.includes(Number(lone))) {
        found.loneInnocents++;
        if (r.classification === 'strong_match') found.strongInnocents++;
      }
    }
    if (hit) found.coalitionsWithInnocents++;
  }
  return {
    coalitions: options.coalitions,
    splices: options.coalitions * options.perCoalition,
    ...found,
    pValue: poissonTail(found.loneInnocents, found.predicted),
  };
}
