import { createHmac } from 'node:crypto';
import { deriveKey } from '../crypto/secret.js';
import { badRequest } from '../errors.js';

/**
 * Which bit of a viewer's 40-bit id each segment of one content item carries, and which variant
 * each value of that bit is served as.
 *
 * A viewer's id is permanent. Under one rule for every film (segment s carries bit s mod 40, bit 0
 * served as A) a viewer's A/B pattern is the same in every film: colluders who compare their copies
 * of one film with a victim's copy of it learn the victim's pattern everywhere, and can splice their
 * copies of another film to it. So content ingested now gets a keyed rule of its own: a keyed
 * permutation of which bit position each phase (segment mod 40) carries, and a keyed flip of A and
 * B per phase, both derived from the deployment's secret and the content id. A segment is still A or
 * B by one bit of the viewer's id, and the pattern still repeats every 40 segments; what one film's
 * copies show says nothing about another's. Content ingested before keeps the fixed rule, recorded
 * with it (the content row's segment_rule).
 */

export const PHASES = 40;

/**
 * The segment lengths content may be packaged in (seconds). 10 is the spec's target duration and
 * the default; shorter segments carry more bits per minute of a leak, for more files and requests.
 */
export const SEGMENT_LENGTHS = [2, 4, 6, 10] as const;
export const DEFAULT_SEGMENT_SECONDS = 10;

/** A --segment-seconds value: one of SEGMENT_LENGTHS (absent: the default), or a clear refusal. */
export function segmentSecondsOption(value: string | number | undefined): number {
  if (value === undefined) return DEFAULT_SEGMENT_SECONDS;
  const n = typeof value === 'number' ? value : Number(value);
  if (!(SEGMENT_LENGTHS as readonly number[]).includes(n))
    throw badRequest(`--segment-seconds must be one of ${SEGMENT_LENGTHS.join(', ')}, got ${JSON.stringify(value)}`);
  return n;
}

/** The rule with segments of another length (a content item's own choice). */
export function withSegmentSeconds(rule: SegmentRule, segmentSeconds: number): SegmentRule {
  return rule.segmentSeconds === segmentSeconds ? rule : { ...rule, segmentSeconds };
}

export type SegmentRuleKind = 'fixed' | 'keyed';

export interface SegmentRule {
  kind: SegmentRuleKind;
  /**
   * how long each segment is, in seconds: the content's choice at ingest (one of SEGMENT_LENGTHS), so
   * the time a moment of the film falls in a segment is part of the rule too
   */
  segmentSeconds: number;
  /** per phase (segment mod 40): the position of the id's bit it carries */
  positions: readonly number[];
  /** per phase: 1 where the bit's value is served flipped (bit 0 as B, bit 1 as A) */
  flips: readonly (0 | 1)[];
}

/** The one rule of content ingested before rules were keyed: segment s carries bit s mod 40, 0 as A. */
export const FIXED_RULE: SegmentRule = Object.freeze({
  kind: 'fixed',
  segmentSeconds: DEFAULT_SEGMENT_SECONDS,
  positions: Object.freeze(Array.from({ length: PHASES }, (_, i) => i)),
  flips: Object.freeze(new Array<0 | 1>(PHASES).fill(0)),
});

/** The key every content item's rule is derived from (a sub-key of the server secret). */
export function segmentRuleKey(serverSecret: Buffer): Buffer {
  return deriveKey(serverSecret, 'segment-rule');
}

/** A stream of keyed bytes for one content item's rule: HMAC blocks in counter mode. */
function keyedBytes(key: Buffer, contentId: string): () => number {
  let block = Buffer.alloc(0);
  let used = 0;
  let counter = 0;
  return () => {
    if (used === block.length) {
      block = createHmac('sha256', key).update(`drm segment rule v1\0${contentId}\0${counter++}`).digest();
      used = 0;
    }
    return block[used++] as number;
  };
}

/** The keyed rule of one content item: a uniform permutation (Fisher–Yates, unbiased by rejection) and 40 flips. */
export function keyedRule(ruleKey: Buffer, contentId: string): SegmentRule {
  const next = keyedBytes(ruleKey, contentId);
  const positions = Array.from({ length: PHASES }, (_, i) => i);
  for (let i = PHASES - 1; i > 0; i--) {
    // the largest multiple of i + 1 below 256 keeps every choice equally likely
    const limit = 256 - (256 % (i + 1));
    let byte = next();
    while (byte >= limit) byte = next();
    const j = byte % (i + 1);
    [positions[i], positions[j]] = [positions[j] as number, positions[i] as number];
  }
  const flips: (0 | 1)[] = [];
  for (let i = 0; i < PHASES; i += 8) {
    const byte = next();
    for (let k = 0; k < 8; k++) flips.push(((byte >> k) & 1) as 0 | 1);
  }
  return { kind: 'keyed', segmentSeconds: DEFAULT_SEGMENT_SECONDS, positions, flips };
}

/**
 * A deployment's rules, derived from its key once per content item: every segment request asks for
 * one, and deriving costs some 10 µs (two HMACs and a shuffle). The most recent RULES_KEPT are kept.
 */
export class SegmentRules {
  private readonly kept = new Map<string, SegmentRule>();

  constructor(readonly key: Buffer) {}

  of(kind: string, contentId: string, segmentSeconds = DEFAULT_SEGMENT_SECONDS): SegmentRule {
    if (kind === 'fixed') return withSegmentSeconds(FIXED_RULE, segmentSeconds);
    const name = `${contentId}/${segmentSeconds}`;
    let rule = this.kept.get(name);
    if (!rule) {
      rule = withSegmentSeconds(ruleOfContent(kind, this.key, contentId), segmentSeconds);
      if (this.kept.size >= RULES_KEPT) this.kept.delete(this.kept.keys().next().value as string);
      this.kept.set(name, rule);
    }
    return rule;
  }
}

const RULES_KEPT = 1024;

/** The rule a content item records: `kind` from its row, keyed ones derived again from the key. */
export function ruleOfContent(kind: string, ruleKey: Buffer, contentId: string): SegmentRule {
  if (kind === 'fixed') return FIXED_RULE;
  if (kind === 'keyed') return keyedRule(ruleKey, contentId);
  throw new Error(`unknown segment rule ${JSON.stringify(kind)} for content ${contentId}`);
}

const phaseOf = (segment: number) => segment % PHASES;

/** The position of the id's bit that segment `segment` carries. */
export function positionOf(rule: SegmentRule, segment: number): number {
  return rule.positions[phaseOf(segment)] as number;
}

/** Whether segment `segment` serves the bit's value flipped. */
export function flippedAt(rule: SegmentRule, segment: number): boolean {
  return rule.flips[phaseOf(segment)] === 1;
}

/** The variant bit a viewer with id `bits` is served on a segment: 0 for A, 1 for B. */
export function servedBit(rule: SegmentRule, bits: string, segment: number): 0 | 1 {
  const bit = bits[positionOf(rule, segment)] === '1' ? 1 : 0;
  return (bit ^ (flippedAt(rule, segment) ? 1 : 0)) as 0 | 1;
}

/** The id whose copy is variant A throughout: what a copy served unmarked reads as, in id space. */
export function allAId(rule: SegmentRule): string {
  const bits = new Array<string>(PHASES).fill('0');
  rule.positions.forEach((position, phase) => {
    bits[position] = String(rule.flips[phase]);
  });
  return bits.join('');
}
