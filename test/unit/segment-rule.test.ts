import { describe, expect, it } from 'vitest';
import { matchCandidates } from '../../src/domain/forensics/matching/matching.js';
import type { Candidate } from '../../src/domain/forensics/matching/packed-ids.js';
import { wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { viewerIdKey, viewerIdWord } from '../../src/domain/identity/viewer-ids.js';
import {
  allAId,
  FIXED_RULE,
  keyedRule,
  positionOf,
  type SegmentRule,
  SegmentRules,
  segmentSecondsOption,
  servedBit,
} from '../../src/watermark/segment-rule.js';
import { segmentAt, variantFor } from '../../src/watermark/segments.js';
import { gauss, rng } from '../helpers/seeded.js';

// Which bit of a viewer's permanent id each segment carries. Content ingested before keeps the fixed
// rule (bit s mod 40, 0 as A); new content gets a rule of its own, keyed from the deployment's secret
// and the content id, so that a viewer's A/B pattern on one film says nothing about another.

const KEY = Buffer.alloc(32, 9);
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);
const randomId = (u: () => number) => Array.from({ length: 40 }, () => (u() < 0.5 ? '0' : '1')).join('');
const flip = (id: string, p: number) => `${id.slice(0, p)}${id[p] === '0' ? '1' : '0'}${id.slice(p + 1)}`;
const pattern = (rule: SegmentRule, id: string, segments: readonly number[]) =>
  segments.map((s) => servedBit(rule, id, s));

describe('the fixed rule of content ingested before keyed rules', () => {
  it('serves segment s by bit s mod 40 of the id, 0 as variant A', () => {
    const id = `01${'0'.repeat(37)}1`;
    expect([0, 1, 39, 40, 41, 79, 80].map((s) => variantFor(id, s, FIXED_RULE))).toEqual([
      'A',
      'B',
      'B',
      'A',
      'B',
      'B',
      'A',
    ]);
    expect(allAId(FIXED_RULE)).toBe('0'.repeat(40));
  });
});

describe('a keyed rule', () => {
  const rule = keyedRule(KEY, 'c0ffee00-0000-4000-8000-000000000001');

  it('is a permutation of the 40 positions with a flip per segment of the cycle, the same every time it is derived', () => {
    expect([...rule.positions].sort((a, b) => a - b)).toEqual(range(0, 40));
    expect(rule.flips).toHaveLength(40);
    expect(keyedRule(KEY, 'c0ffee00-0000-4000-8000-000000000001')).toEqual(rule);
    expect(rule.positions).not.toEqual(range(0, 40));
  });

  it('differs from one content id to another and from one deployment secret to another', () => {
    const other = keyedRule(KEY, 'c0ffee00-0000-4000-8000-000000000002');
    const elsewhere = keyedRule(Buffer.alloc(32, 10), 'c0ffee00-0000-4000-8000-000000000001');
    expect(other.positions).not.toEqual(rule.positions);
    expect(elsewhere.positions).not.toEqual(rule.positions);
    expect(elsewhere.flips).not.toEqual(rule.flips);
  });

  it('serves every segment as A or B by exactly one bit of the id, the same one every 40 segments', () => {
    const id = randomId(rng(21));
    for (const s of range(0, 80)) {
      const p = positionOf(rule, s);
      expect(positionOf(rule, s + 40)).toBe(p);
      expect(servedBit(rule, flip(id, p), s)).not.toBe(servedBit(rule, id, s));
      for (const q of range(0, 40).filter((q) => q !== p))
        expect(servedBit(rule, flip(id, q), s)).toBe(servedBit(rule, id, s));
    }
  });

  it('names the id served variant A throughout, what a copy served unmarked reads as', () => {
    const standIn = allAId(rule);
    expect(range(0, 120).map((s) => variantFor(standIn, s, rule))).toEqual(new Array(120).fill('A'));
  });

  it("shows nothing of a viewer's pattern on another film: over 500 films, a pattern agrees with another's at half the segments", () => {
    const id = randomId(rng(22));
    const films = range(0, 500).map((i) => keyedRule(KEY, `film-${i}`));
    const first = pattern(films[0] as SegmentRule, id, range(0, 40));
    const agree = films.slice(1).map((r) => pattern(r, id, range(0, 40)).filter((b, s) => b === first[s]).length);
    const mean = agree.reduce((a, b) => a + b, 0) / agree.length;
    // 40 fair coins: mean 20, standard error of the mean over 499 films 0.14
    expect(mean).toBeGreaterThan(19.3);
    expect(mean).toBeLessThan(20.7);
  });
});

describe("a deployment's rules", () => {
  it('derives each item’s keyed rule from its key, keeps it for the next request, and gives older content the fixed one', () => {
    const rules = new SegmentRules(KEY);
    const first = rules.of('keyed', 'film-1');
    expect(first).toEqual(keyedRule(KEY, 'film-1'));
    expect(rules.of('keyed', 'film-1')).toBe(first);
    expect(rules.of('fixed', 'film-2')).toBe(FIXED_RULE);
    expect(() => rules.of('mod40', 'film-3')).toThrow(/unknown segment rule/);
  });

  it('carries the length each item was cut in: the same bits per segment, the segments found at their own times', () => {
    const rules = new SegmentRules(KEY);
    const tenSeconds = rules.of('keyed', 'film-1');
    const twoSeconds = rules.of('keyed', 'film-1', 2);
    expect(tenSeconds.segmentSeconds).toBe(10);
    expect(twoSeconds).toEqual({ ...tenSeconds, segmentSeconds: 2 });
    expect(rules.of('keyed', 'film-1', 2)).toBe(twoSeconds);
    expect(rules.of('fixed', 'film-2', 4)).toEqual({ ...FIXED_RULE, segmentSeconds: 4 });
    // 25 fps: frame 49 is the last of segment 0 at 2 s, frame 50 the first of segment 1; at 10 s both are in segment 0
    expect([49, 50, 249, 250].map((frame) => segmentAt(frame / 25, 2))).toEqual([0, 1, 4, 5]);
    expect([49, 50, 249, 250].map((frame) => segmentAt(frame / 25, 10))).toEqual([0, 0, 0, 1]);
  });
});

describe('the segment lengths content may be cut in', () => {
  it('are 2, 4, 6 and 10 s, 10 when none is asked for; any other is refused in one line', () => {
    expect([undefined, '2', 4, '6', '10'].map((v) => segmentSecondsOption(v))).toEqual([10, 2, 4, 6, 10]);
    for (const bad of ['5', '0', '2.5', 'ten', '', 12])
      expect(() => segmentSecondsOption(bad)).toThrow(/^--segment-seconds must be one of 2, 4, 6, 10, got /);
  });
});

describe('colluders who know a victim’s pattern from another film', () => {
  const idKey = viewerIdKey(Buffer.alloc(32, 4));
  const viewers: Candidate[] = range(0, 20).map((i) => ({
    viewerId: `v${String(i).padStart(2, '0')}`,
    binaryId: wordToBinaryId(viewerIdWord(idKey, BigInt(i))),
  }));
  const SEGMENTS = range(0, 40);

  /**
   * Three colluders hold their copies of film Y, and a victim's copy of film X beside their own: where
   * one of them was served on Y what the victim was served on X, they take that colluder's segment.
   */
  function spliceToVictim(trio: readonly Candidate[], victim: Candidate, x: SegmentRule, y: SegmentRule) {
    const u = rng(23);
    return SEGMENTS.map((s) => {
      const want = servedBit(x, victim.binaryId, s);
      const source = trio.find((c) => servedBit(y, c.binaryId, s) === want) ?? trio[0];
      return { index: s, z: (servedBit(y, (source as Candidate).binaryId, s) === 0 ? 9 : -9) + gauss(u) };
    });
  }

  /** A coalition and victim such that, under one rule for every film, the splice spells the victim on all 40 segments. */
  function framable(): { trio: Candidate[]; victim: Candidate } {
    for (let a = 0; a < 20; a++)
      for (let b = a + 1; b < 20; b++)
        for (let c = b + 1; c < 20; c++) {
          const trio = [viewers[a], viewers[b], viewers[c]] as Candidate[];
          const victim = viewers.find(
            (v) =>
              !trio.includes(v) && SEGMENTS.every((s) => trio.some((m) => m.binaryId[s % 40] === v.binaryId[s % 40])),
          );
          if (victim) return { trio, victim };
        }
    throw new Error('no framable victim among 20 viewers');
  }

  it('under one rule for every film, name the victim: the defect the keyed rule removes', () => {
    const { trio, victim } = framable();
    const leak = spliceToVictim(trio, victim, FIXED_RULE, FIXED_RULE);
    const r = matchCandidates(leak, viewers, { mask: idKey.mask, rule: FIXED_RULE });
    expect(r.classification).toBe('strong_match');
    expect(r.matched?.viewerId).toBe(victim.viewerId);
  });

  it('under keyed rules, spell nobody innocent: the victim does not fit and no innocent is named', () => {
    const { trio, victim } = framable();
    const x = keyedRule(KEY, 'film-x');
    const y = keyedRule(KEY, 'film-y');
    const r = matchCandidates(spliceToVictim(trio, victim, x, y), viewers, { mask: idKey.mask, rule: y });
    expect(r.classification).not.toBe('strong_match');
    expect(r.candidateSet.map((c) => c.viewerId)).not.toContain(victim.viewerId);
  });
});
