import { randomBytes } from 'node:crypto';
import { shellOf, type ViewerIdKey, viewerIdWord } from '../../src/domain/identity/viewer-ids.js';

/** A platform's viewer ids, as words (bit i = character i of the binaryId) and split for fast scans. */
export interface Population {
  name: string;
  ids: bigint[];
  set: Set<bigint>;
  /** bits 0–31 and 32–39 of each id, for scanning a million ids per trial without bigints */
  low: Uint32Array;
  high: Uint8Array;
  /** the dimension of the code every id lies in (the attacker's code), or undefined for random ids */
  dimension?: number;
  /** the secret mask of the key the ids were made with (0 for random ids): the verdict places ids in their levels with it */
  mask: bigint;
}

export const random40 = (): bigint => BigInt(`0x${randomBytes(5).toString('hex')}`);

function populationOf(name: string, ids: bigint[], mask: bigint, dimension?: number): Population {
  const low = new Uint32Array(ids.length);
  const high = new Uint8Array(ids.length);
  ids.forEach((id, i) => {
    low[i] = Number(id & 0xffffffffn);
    high[i] = Number(id >> 32n);
  });
  return { name, ids, set: new Set(ids), low, high, mask, ...(dimension === undefined ? {} : { dimension }) };
}

/** The first n ids drm gives with `margin` spare dimensions (ID_MARGIN is drm's). */
export function codeWordPopulation(n: number, margin: number, key: ViewerIdKey): Population {
  const ids = Array.from({ length: n }, (_, i) => viewerIdWord(key, BigInt(i), margin));
  const dimension = shellOf(BigInt(n - 1), margin).level.dimension;
  return populationOf(`code words, margin ${margin} (level ${dimension})`, ids, key.mask, dimension);
}

/** n distinct ids drawn at random from the whole 40-bit space. */
export function randomPopulation(n: number): Population {
  const set = new Set<bigint>();
  while (set.size < n) set.add(random40());
  return populationOf('random ids', [...set], 0n);
}

/** Indexes of the ids that equal `word` on the positions set in `positions` (both 40-bit). */
export function agreeingOn(p: Population, word: bigint, positions: bigint): number[] {
  const wordLow = Number(word & 0xffffffffn);
  const wordHigh = Number(word >> 32n);
  const maskLow = Number(positions & 0xffffffffn);
  const maskHigh = Number(positions >> 32n);
  const found: number[] = [];
  for (let i = 0; i < p.low.length; i++) {
    if ((((p.low[i] as number) ^ wordLow) & maskLow) === 0 && (((p.high[i] as number) ^ wordHigh) & maskHigh) === 0)
      found.push(i);
  }
  return found;
}
