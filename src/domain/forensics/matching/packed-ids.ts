import { ID_BITS } from '../../../watermark/segments.js';

// Viewers' 40-bit ids packed into bytes, so that matching scores 100,000 candidates in milliseconds.

const ID_PATTERN = new RegExp(`^[01]{${ID_BITS}}$`);
/** An id packs into 5 bytes, byte j holding bits 8j..8j+7 with bit 8j as its top bit. */
export const BYTES = ID_BITS / 8;

/**
 * Per byte position and byte value, the sum of the per-bit weights w over the bits that value sets.
 * Any sum of w over a candidate's 1-bits (or over the bits two candidates disagree on, via XOR)
 * then costs 5 look-ups instead of 40 multiply-adds: 100,000 candidates stay a few milliseconds.
 */
export function byteTable(w: ArrayLike<number>): Float64Array {
  const table = new Float64Array(BYTES * 256);
  for (let j = 0; j < BYTES; j++) {
    for (let v = 1; v < 256; v++) {
      let acc = 0;
      for (let k = 0; k < 8; k++) if (v & (0x80 >>> k)) acc += w[8 * j + k] as number;
      table[j * 256 + v] = acc;
    }
  }
  return table;
}

export type Candidate = { viewerId: string; binaryId: string };

/**
 * Candidates as matching holds them: their viewer ids, and their binaryIds packed 5 bytes each.
 * A million of them held this way take about 60 MB of heap with UUID viewer ids, where a million
 * row objects take about 170 MB (bench:matching-db).
 */
export interface PackedCandidates {
  readonly viewerIds: readonly string[];
  readonly packed: Uint8Array;
}

function checkedId(candidate: Candidate): number {
  const id = candidate.binaryId;
  if (typeof id !== 'string' || !ID_PATTERN.test(id)) {
    throw new RangeError(
      `candidate ${String(candidate.viewerId)}: binaryId must be exactly ${ID_BITS} ` +
        `characters of 0 and 1 (got ${JSON.stringify(String(id).slice(0, 60))})`,
    );
  }
  return Number.parseInt(id, 2);
}

function writeId(packed: Uint8Array, c: number, x: number): void {
  const lo = x >>> 0;
  const o = c * BYTES;
  packed[o] = Math.floor(x / 2 ** 32);
  packed[o + 1] = lo >>> 24;
  packed[o + 2] = lo >>> 16;
  packed[o + 3] = lo >>> 8;
  packed[o + 4] = lo;
}

/** Candidates added a page at a time (as the database gives them), packed as they come. */
export class CandidatePacker {
  private readonly viewerIds: string[] = [];
  private packed = new Uint8Array(1024 * BYTES);

  add(candidate: Candidate): void {
    this.push(candidate.viewerId, checkedId(candidate));
  }

  /** A candidate whose id comes as the number its 40 characters spell in base 2 (character 0 the highest bit). */
  addBits(viewerId: string, bits: number): void {
    if (!Number.isSafeInteger(bits) || bits < 0 || bits >= 2 ** ID_BITS)
      throw new RangeError(`candidate ${viewerId}: bits must be a whole number below 2^${ID_BITS} (got ${bits})`);
    this.push(viewerId, bits);
  }

  private push(viewerId: string, x: number): void {
    const c = this.viewerIds.length;
    if ((c + 1) * BYTES > this.packed.length) {
      const grown = new Uint8Array(this.packed.length * 2);
      grown.set(this.packed);
      this.packed = grown;
    }
    writeId(this.packed, c, x);
    this.viewerIds.push(viewerId);
  }

  get size(): number {
    return this.viewerIds.length;
  }

  done(): PackedCandidates {
    return { viewerIds: this.viewerIds, packed: this.packed.subarray(0, this.viewerIds.length * BYTES) };
  }
}

export function packCandidates(candidates: readonly Candidate[]): PackedCandidates {
  return { viewerIds: candidates.map((c) => c.viewerId), packed: packIds(candidates) };
}

/** Bit b (character b of the binaryId) of candidate c's packed id. */
export const bitAt = (packed: Uint8Array, c: number, b: number): number =>
  ((packed[c * BYTES + (b >> 3)] as number) >> (7 - (b & 7))) & 1;

/** Candidate c's binaryId, read back from its packed bytes. */
export function binaryIdAt(packed: Uint8Array, c: number): string {
  const o = c * BYTES;
  let id = '';
  for (let j = 0; j < BYTES; j++) id += (packed[o + j] as number).toString(2).padStart(8, '0');
  return id;
}

/**
 * The candidates' ids parsed once into bytes (parseInt is exact: 2^40 is far below 2^53), so that
 * the loops over them touch only typed arrays and allocate nothing.
 */
export function packIds(candidates: readonly Candidate[]): Uint8Array {
  const packed = new Uint8Array(candidates.length * BYTES);
  for (const [c, candidate] of candidates.entries()) writeId(packed, c, checkedId(candidate));
  return packed;
}
