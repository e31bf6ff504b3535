import Table from 'cli-table3';
import { randomBytes } from 'node:crypto';
import { wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { ID_MARGIN, viewerIdKey } from '../../src/domain/identity/viewer-ids.js';
import { matchPackedCandidates } from '../../src/domain/forensics/matching/matching.js';
import { type Candidate, packCandidates } from '../../src/domain/forensics/matching/packed-ids.js';
import { codeWordPopulation, type Population, randomPopulation } from '../framing/populations.js';
import { FIXED_RULE } from '../../src/watermark/segment-rule.js';

// The shortest leak with strong_match over many leakers and starting offsets,
// among N viewers, for drm's ids, for code words without a margin, and for random ids. Every
// segment is read at the strength of a real reading (its |z| taken in turn from `magnitudes`),
// so what varies is the ids: a leak is strong once no other id agrees with the leaker on every
// bit it holds and the runner-up is excluded. The ids that fit every held bit are narrowed by a
// scan as the leak grows; from the first length where the leaker alone fits, the real matcher
// decides (nothing before that length can be strong: a second full fit makes the confusion 1).

export const OFFSETS = [0, 9, 17, 26, 33];

export interface NamingSpread {
  ids: string;
  viewers: number;
  trials: number;
  /** shortest strong leak in segments (10 s each) */
  median: number;
  p95: number;
  worst: number;
  /** leaks never strong within 40 segments */
  never: number;
  /** ⌈log2 N⌉ + 2, the target for every leaker */
  target: number;
  withinTarget: number;
}

const bitOf = (p: Population, i: number, position: number): number =>
  position < 32 ? ((p.low[i] as number) >>> position) & 1 : ((p.high[i] as number) >>> (position - 32)) & 1;

/** The number of segments from `offset` after which the leaker alone fits every held bit. */
function uniqueFrom(p: Population, leaker: number, offset: number): number | undefined {
  let survivors: number[] | undefined;
  for (let length = 1; length <= 40; length++) {
    const position = (offset + length - 1) % 40;
    const bit = bitOf(p, leaker, position);
    const next: number[] = [];
    if (survivors) {
      for (const i of survivors) if (bitOf(p, i, position) === bit) next.push(i);
    } else {
      for (let i = 0; i < p.low.length; i++) if (bitOf(p, i, position) === bit) next.push(i);
    }
    survivors = next;
    if (survivors.length === 1) return length;
  }
  return undefined;
}

function readingOf(binaryId: string, offset: number, length: number, magnitudes: readonly number[]) {
  return Array.from({ length }, (_, k) => {
    const index = offset + k;
    const magnitude = magnitudes[index % magnitudes.length] as number;
    return { index, z: binaryId[index % 40] === '0' ? magnitude : -magnitude };
  });
}

const quantile = (sorted: readonly number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;

export function namingSpread(p: Population, magnitudes: readonly number[], leakers: number): NamingSpread {
  const candidates: Candidate[] = p.ids.map((id, i) => ({ viewerId: String(i), binaryId: wordToBinaryId(id) }));
  const packed = packCandidates(candidates);
  const found: number[] = [];
  let never = 0;
  for (let k = 0; k < leakers; k++) {
    const leaker = Math.floor(Math.random() * p.ids.length);
    const binaryId = (candidates[leaker] as Candidate).binaryId;
    for (const offset of OFFSETS) {
      let strongAt: number | undefined;
      for (let length = uniqueFrom(p, leaker, offset) ?? 41; length <= 40 && strongAt === undefined; length++) {
        const m = matchPackedCandidates(readingOf(binaryId, offset, length, magnitudes), packed, {
          mask: p.mask,
          rule: FIXED_RULE,
        });
        if (m.classification === 'strong_match' && m.matched?.viewerId === String(leaker)) strongAt = length;
      }
      if (strongAt === undefined) never++;
      else found.push(strongAt);
    }
  }
  found.sort((a, b) => a - b);
  const target = Math.ceil(Math.log2(p.ids.length)) + 2;
  return {
    ids: p.name,
    viewers: p.ids.length,
    trials: leakers * OFFSETS.length,
    median: quantile(found, 0.5),
    p95: quantile(found, 0.95),
    worst: found[found.length - 1] ?? Number.NaN,
    never,
    target,
    withinTarget: found.filter((x) => x <= target).length,
  };
}

/** drm's ids, code words filled level by level (no margin), and random ids, among each of `sizes` viewers. */
export function namingTable(
  sizes: readonly number[],
  magnitudes: readonly number[],
  leakers: number,
  log: (m: string) => void,
): NamingSpread[] {
  const rows: NamingSpread[] = [];
  for (const n of sizes) {
    for (const make of [
      () => codeWordPopulation(n, ID_MARGIN, viewerIdKey(randomBytes(32))),
      () => codeWordPopulation(n, 0, viewerIdKey(randomBytes(32))),
      () => randomPopulation(n),
    ]) {
      const population = make();
      const started = performance.now();
      rows.push(namingSpread(population, magnitudes, leakers));
      log(
        `${population.name} among ${n}: ${leakers} leakers × ${OFFSETS.length} offsets in ${((performance.now() - started) / 1000).toFixed(0)} s`,
      );
    }
  }
  return rows;
}

export function printNaming(rows: readonly NamingSpread[], leakers: number): string {
  const table = new Table({
    head: ['viewers', 'ids', 'median', '95%', 'worst', 'never strong', `within ⌈log2 N⌉ + 2`],
    style: { head: [], border: [] },
  });
  const s = (segments: number) => `${segments * FIXED_RULE.segmentSeconds} s`;
  for (const r of rows)
    table.push([
      r.viewers.toLocaleString('en'),
      r.ids,
      s(r.median),
      s(r.p95),
      s(r.worst),
      r.never,
      `${r.withinTarget} of ${r.trials} (${s(r.target)})`,
    ]);
  return `Shortest leak with strong_match, ${leakers} leakers × ${OFFSETS.length} starting segments (${OFFSETS.join(', ')}) each\n${table.toString()}\n`;
}
