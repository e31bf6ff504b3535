import { describe, expect, it } from 'vitest';
import { wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { viewerIdKey, viewerIdWord } from '../../src/domain/identity/viewer-ids.js';
import {
  type MatchResult,
  matchCandidates,
  signFor,
  STRONG_BELOW,
  WEAK_FP,
} from '../../src/domain/forensics/matching/matching.js';
import type { Candidate } from '../../src/domain/forensics/matching/packed-ids.js';
import { allAId, FIXED_RULE, keyedRule, positionOf, servedBit } from '../../src/watermark/segment-rule.js';
import { gauss, rng } from '../helpers/seeded.js';

// The verdict rules, one scenario each, on readings made up the way the detector gives them, for
// content under a keyed segment rule (each segment carries the bit of the id its rule says, flipped
// where it says). The rates (how often each rule errs over thousands of leaks) come from bench:verdicts.

const RULE = keyedRule(Buffer.alloc(32, 3), '6b0c6d61-4f1e-4e0e-9a57-2f1d3c6a9e01');

const randomId = (u: () => number) => Array.from({ length: 40 }, () => (u() < 0.5 ? '0' : '1')).join('');
const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

const key = viewerIdKey(Buffer.alloc(32, 7));
const match = (segments: { index: number; z: number }[], candidates: readonly Candidate[]) =>
  matchCandidates(segments, candidates, { mask: key.mask, rule: RULE });

/** The first n viewers of a deployment, with ids as drm allocates them. */
const viewers = (n: number): Candidate[] =>
  Array.from({ length: n }, (_, i) => ({
    viewerId: `v${String(i).padStart(7, '0')}`,
    binaryId: wordToBinaryId(viewerIdWord(key, BigInt(i))),
  }));

/** What the detector reads from a copy served to `id`: |z| ≈ strength on each segment. */
const leakOf = (id: string, indices: readonly number[], strength: number, u: () => number, noise = 1) =>
  indices.map((index) => ({ index, z: signFor(id, index, RULE) * strength + noise * gauss(u) }));

/** The variant a viewer is served on a segment, as a bit (0 for A). */
const bitOf = (id: string, segment: number) => String(servedBit(RULE, id, segment));

function expectNobodyNamed(r: MatchResult) {
  expect(r.matched).toBeUndefined();
  expect(r.classification).not.toBe('strong_match');
}

describe('strong_match', () => {
  it('names the one viewer of 20 who fits all the bits of a 40-segment leak, an innocent fitting them with chance ≤ 10⁻⁶', () => {
    const u = rng(1);
    const all = viewers(20);
    const leaker = all[7] as Candidate;
    const r = match(leakOf(leaker.binaryId, range(0, 40), 9, u), all);
    expect(r.classification).toBe('strong_match');
    expect(r.matched?.viewerId).toBe(leaker.viewerId);
    expect(r.identificationProbability).toBeLessThanOrEqual(STRONG_BELOW);
    expect(r.markProbability).toBeLessThan(1e-100);
    expect(r.decidedBits).toBe(40);
    expect(r.binaryId).toBe(leaker.binaryId);
  });

  it('names the only viewer who streamed the content from a short leak: nobody else could stand in their place', () => {
    const u = rng(2);
    const [only] = viewers(1) as [Candidate];
    const r = match(leakOf(only.binaryId, range(3, 6), 9, u), [only]);
    expect(r.classification).toBe('strong_match');
    expect(r.identificationProbability).toBe(0);
  });

  it('follows --strong-below: the same leak names nobody under a stricter bound', () => {
    const u = rng(1);
    const all = viewers(20);
    const leak = leakOf((all[7] as Candidate).binaryId, range(0, 40), 9, u);
    const r = matchCandidates(leak, all, { mask: key.mask, rule: RULE, strongBelow: 1e-9 });
    expect(r.classification).toBe('weak_match');
    expect(r.candidateSet.map((c) => c.viewerId)).toEqual(['v0000007']);
  });
});

describe('weak_match: a candidate set, nobody named', () => {
  it('one 10-s segment: about half the viewers share its bit, and the result lists them without naming any', () => {
    const u = rng(3);
    const all = viewers(20);
    const leaker = all[1] as Candidate;
    const r = match(leakOf(leaker.binaryId, [5], 12, u), all);
    expect(r.classification).toBe('weak_match');
    expectNobodyNamed(r);
    const sharing = all.filter((v) => bitOf(v.binaryId, 5) === bitOf(leaker.binaryId, 5)).map((v) => v.viewerId);
    expect(r.fitting).toBe(sharing.length);
    expect(r.candidateSet.map((c) => c.viewerId)).toEqual(sharing.slice(0, 20));
    expect(r.identificationProbability).toBe(1);
    expect(r.segmentsToSeparate).toBeGreaterThan(0);
    for (const c of r.candidateSet) expect(c.posterior).toBeCloseTo(1 / sharing.length, 6);
  });

  it('a 12-segment leak that only the leaker fits still names nobody among 20: an innocent could fit 12 bits too often', () => {
    const u = rng(4);
    const all = viewers(20);
    const leaker = all[12] as Candidate;
    const r = match(leakOf(leaker.binaryId, range(0, 12), 9, u), all);
    expect(r.fitting).toBe(1);
    expect(r.classification).toBe('weak_match');
    expectNobodyNamed(r);
    expect(r.identificationProbability).toBeGreaterThan(STRONG_BELOW);
    expect(r.candidateSet).toMatchObject([{ viewerId: leaker.viewerId, agreement: 12, separatingSegments: 0 }]);
    expect(r.segmentsToName).toBeGreaterThan(0);
    expect(r.reason).toMatch(/an innocent would fit them/);
    expect(r.reason).toMatch(/spliced by others/);
  });

  it('refuses to break a tie, and gives the same result whatever order the candidates come in', () => {
    const u = rng(5);
    const a = randomId(u);
    // the same bits where segments 0–19 carry them, the other bits elsewhere
    const carried = new Set(range(0, 20).map((s) => positionOf(RULE, s)));
    const twin = [...a].map((b, p) => (carried.has(p) ? b : b === '0' ? '1' : '0')).join('');
    const others = Array.from({ length: 30 }, (_, i) => ({ viewerId: `x${i}`, binaryId: randomId(u) }));
    const candidates = [{ viewerId: 'first', binaryId: a }, { viewerId: 'twin', binaryId: twin }, ...others];
    const leak = leakOf(a, range(0, 20), 12, u);
    const forward = match(leak, candidates);
    const backward = match(leak, [...candidates].reverse());
    expect(forward.classification).toBe('weak_match');
    expectNobodyNamed(forward);
    expect(forward.candidateSet.map((c) => c.viewerId)).toEqual(['first', 'twin']);
    expect(backward).toEqual(forward);
  });
});

describe('mixed_copy: no single viewer explains the readings', () => {
  it('a splice across repeated positions (segments 0–39 of one copy, 40–59 of another) reads positions both ways, and implicates nobody an innocent could stand in for', () => {
    const u = rng(6);
    const all = viewers(20);
    const [a, b] = [all[3] as Candidate, all[9] as Candidate];
    const leak = [...leakOf(a.binaryId, range(0, 40), 10, u), ...leakOf(b.binaryId, range(40, 60), 10, u)];
    const r = match(leak, all);
    expect(r.classification).toBe('mixed_copy');
    expectNobodyNamed(r);
    const differ = range(0, 20)
      .map((s) => positionOf(RULE, s))
      .filter((p) => a.binaryId[p] !== b.binaryId[p]);
    expect(r.mixed?.bothPositions).toEqual(differ.sort((x, y) => x - y));
    expect(r.mixed).toMatchObject({ leastSources: 2, exhaustive: true });
    // a few positions read both ways are all the evidence against either: an innocent could fill either place
    expect(r.mixed?.implicationProbability ?? 1).toBeGreaterThan(WEAK_FP);
    expect(r.mixed?.suspects).toEqual([]);
  });

  it('a long splice of two copies among 6 viewers that differ on many positions implicates exactly the two, each with its own bound', () => {
    const u = rng(17);
    const all = viewers(6);
    // the pair whose ids differ most: every position where they differ is read both ways over three cycles
    const pairs = all.flatMap((a, i) => all.slice(i + 1).map((b) => [a, b] as const));
    const distance = ([a, b]: readonly [Candidate, Candidate]) =>
      [...a.binaryId].filter((x, p) => x !== b.binaryId[p]).length;
    const [a, b] = pairs.reduce((best, pair) => (distance(pair) > distance(best) ? pair : best));
    const cycle = (id: string, from: number) => leakOf(id, range(from, from + 40), 10, u);
    const r = match([...cycle(a.binaryId, 0), ...cycle(b.binaryId, 40), ...cycle(a.binaryId, 80)], all);
    expect(r.classification).toBe('mixed_copy');
    expect(r.mixed).toMatchObject({ leastSources: 2, coalitionsFound: 1, exhaustive: true, inEveryCoalition: 2 });
    expect(r.mixed?.implicationProbability).toBeLessThanOrEqual(WEAK_FP);
    expect(r.mixed?.suspects.map((s) => s.viewerId).sort()).toEqual([a.viewerId, b.viewerId].sort());
    for (const s of r.mixed?.suspects ?? []) expect(s.bound).toBeLessThan(WEAK_FP);
    expect(r.mixed?.named).toBe(false);
  });

  it('a short splice of three copies that many coalitions explain implicates nobody and says how many fit', () => {
    const u = rng(18);
    const all = viewers(20);
    const trio = [all[2], all[8], all[15]] as Candidate[];
    const leak = range(0, 16).flatMap((s) => leakOf((trio[s % 3] as Candidate).binaryId, [s], 10, u));
    const r = match(leak, all);
    expectNobodyNamed(r);
    if (r.classification === 'mixed_copy') {
      expect(r.mixed?.coalitionsFound).toBeGreaterThan(1);
      expect(r.mixed?.suspects).toEqual([]);
    }
  });

  it('an average of two copies over 40 segments among 6 viewers: the cancelled positions single out the pair, and both are named', () => {
    const u = rng(14);
    // either colluder could have an innocent partner: the pair's figure is about twice the 2^-20 a full level gives one
    // viewer, so a pair is named where the level holds few of the content's viewers
    const all = viewers(6);
    const [a, b] = [all[1] as Candidate, all[4] as Candidate];
    // where the two differ the opposite marks cancel: z ≈ 0 although a single copy reads ≈ 9 there
    const leak = range(0, 40).map((s) => ({
      index: s,
      z: ((signFor(a.binaryId, s, RULE) + signFor(b.binaryId, s, RULE)) / 2) * 9 + 0.5 * gauss(u),
      reach: 9,
    }));
    const r = match(leak, all);
    expect(r.classification).toBe('mixed_copy');
    expect(r.mixed?.erasedPositions).toEqual(range(0, 40).filter((p) => a.binaryId[p] !== b.binaryId[p]));
    expect(r.mixed?.suspects.map((c) => c.viewerId).sort()).toEqual([a.viewerId, b.viewerId]);
    expect(r.mixed?.named).toBe(true);
    expect(r.mixed?.pairProbability).toBeLessThanOrEqual(STRONG_BELOW);
    expect(r.matched).toBeUndefined();
  });

  it('an average of two copies among 20 viewers, or over 12 segments: the pair is a suspect, not named', () => {
    const many = viewers(20);
    const [x, y] = [many[6] as Candidate, many[13] as Candidate];
    const full = range(0, 40).map((s) => ({
      index: s,
      z: ((signFor(x.binaryId, s, RULE) + signFor(y.binaryId, s, RULE)) / 2) * 9,
      reach: 9,
    }));
    expect(match(full, many)).toMatchObject({ classification: 'mixed_copy', mixed: { named: false, leastSources: 2 } });
    const u = rng(15);
    const all = viewers(20);
    const [a, b] = [all[2] as Candidate, all[9] as Candidate];
    const leak = range(0, 12).map((s) => ({
      index: s,
      z: ((signFor(a.binaryId, s, RULE) + signFor(b.binaryId, s, RULE)) / 2) * 9 + 0.5 * gauss(u),
      reach: 9,
    }));
    const r = match(leak, all);
    expectNobodyNamed(r);
    expect(r.mixed?.named ?? false).toBe(false);
  });

  it('a single copy whose faint segments read faint is no average: its viewer is named', () => {
    const u = rng(16);
    const all = viewers(20);
    const leaker = all[4] as Candidate;
    const leak = leakOf(leaker.binaryId, range(0, 30), 9, u).map((s) => ({ ...s, reach: 9 }));
    // a dark stretch: two segments a single copy reads weakly, and their reach says so
    for (const s of leak.slice(10, 12)) Object.assign(s, { z: s.z / 9, reach: 1 });
    const r = match(leak, all);
    expect(r.mixed).toBeNull();
    expect(r.classification).not.toBe('mixed_copy');
  });

  it('a clip cut mid-segment is one copy: a few stray frames of the segment after it are no erased position', () => {
    const u = rng(19);
    const all = viewers(20);
    const leaker = all[5] as Candidate;
    const leak = leakOf(leaker.binaryId, range(0, 12), 9, u).map((s) => ({ ...s, reach: 9, coverage: 10 }));
    // 4 frames (0.16 s) of segment 12: they hold almost none of its mark, whatever its reach says
    leak.push({ index: 12, z: 0.05, reach: 9, coverage: 0.16 });
    const r = match(leak, all);
    expect(r.classification).not.toBe('mixed_copy');
    expect(r.mixed).toBeNull();
    expect(r.candidateSet.map((c) => c.viewerId)).toContain(leaker.viewerId);
  });

  it('a copy with every other segment from the unmarked master is one copy read with unmarked stretches, not a mix', () => {
    const u = rng(20);
    const all = viewers(20);
    const leaker = all[11] as Candidate;
    const leak = leakOf(leaker.binaryId, range(0, 80), 9, u).map((s) =>
      s.index % 2 === 0 ? { ...s, reach: 9 } : { index: s.index, z: 0.3 * gauss(u), reach: 9 },
    );
    const r = match(leak, all);
    expect(r.classification).not.toBe('mixed_copy');
    expect(r.fitting).toBeGreaterThanOrEqual(1);
    expect(r.candidateSet.map((c) => c.viewerId).concat(r.matched ? [r.matched.viewerId] : [])).toContain(
      leaker.viewerId,
    );
    expect(r.reason).toMatch(/read as unmarked/);
  });

  it('one copy whose two unmarked segments of one position add up to a decision against it is still one copy', () => {
    const u = rng(23);
    const all = viewers(20);
    const leaker = all[6] as Candidate;
    const leak = leakOf(leaker.binaryId, range(0, 50), 9, u, 0).map((s) => ({ ...s, reach: 9 }));
    // segments 2 and 42 carry the same position; both came from the unmarked master and read noise, 2.9 and 3.3,
    // against the leaker: folded, 4.4 decides that position the other way
    for (const [index, z] of [
      [2, 2.9],
      [42, 3.3],
    ] as const)
      Object.assign(leak[index] as object, { z: -signFor(leaker.binaryId, index, RULE) * z });
    const r = match(leak, all);
    expect(r.classification).not.toBe('mixed_copy');
    expect(r.candidateSet.map((c) => c.viewerId).concat(r.matched ? [r.matched.viewerId] : [])).toContain(
      leaker.viewerId,
    );
  });

  it('a splice read faintly throughout is still a mixed copy: faint decisions are dropped only to find one copy', () => {
    const u = rng(21);
    const all = viewers(20);
    const [a, b] = [all[3] as Candidate, all[9] as Candidate];
    const leak = [...leakOf(a.binaryId, range(0, 40), 4.6, u, 0), ...leakOf(b.binaryId, range(40, 80), 4.6, u, 0)];
    expect(match(leak, all).classification).toBe('mixed_copy');
  });

  it('names nobody when the faint segments dropped to read one copy are decided against the one who fits', () => {
    const u = rng(22);
    const all = viewers(20);
    const [a, b] = [all[3] as Candidate, all[9] as Candidate];
    const leak = [...leakOf(a.binaryId, range(0, 40), 9, u, 0), ...leakOf(b.binaryId, range(40, 80), 4.6, u, 0)];
    const r = match(leak, all);
    expectNobodyNamed(r);
    if (r.classification === 'weak_match') expect(r.reason).toMatch(/faint segment\(s\) read against them/);
  });

  it('the bitwise minority of three copies (a ⊕ b ⊕ c) over 16 segments names no innocent and no one', () => {
    const u = rng(7);
    const all = viewers(20);
    const [a, b, c] = [all[2], all[5], all[11]] as Candidate[] as [Candidate, Candidate, Candidate];
    const minority = range(0, 16).map((s) => {
      const bits = [a, b, c].map((v) => bitOf(v.binaryId, s));
      const odd = bits.filter((x) => x === '1').length % 2 === 1 ? '1' : '0';
      return { index: s, z: (odd === '0' ? 1 : -1) * 10 + gauss(u) };
    });
    const r = match(minority, all);
    expectNobodyNamed(r);
    if (r.classification === 'mixed_copy') expect(r.mixed?.leastSources).not.toBeNull();
  });

  it('three copies averaged frame by frame: positions where one differs read at a third of the strength, and nobody is named', () => {
    const u = rng(8);
    const all = viewers(20);
    const trio = [all[1], all[4], all[16]] as Candidate[];
    const leak = range(0, 30).map((s) => ({
      index: s,
      z: (trio.reduce((acc, v) => acc + signFor(v.binaryId, s, RULE), 0) / 3) * 9 + gauss(u),
    }));
    const r = match(leak, all);
    expectNobodyNamed(r);
  });
});

describe('no_match', () => {
  it('never names anyone, nor finds a mark, in 1,000 unmarked leaks among 10,000 candidates', () => {
    const u = rng(9);
    const candidates = Array.from({ length: 10_000 }, (_, i) => ({ viewerId: `v${i}`, binaryId: randomId(u) }));
    const found = { strong: 0, other: 0 };
    for (let trial = 0; trial < 1000; trial++) {
      const r = match(
        range(0, 20).map((index) => ({ index, z: gauss(u) })),
        candidates,
      );
      if (r.classification === 'strong_match') found.strong++;
      else if (r.classification !== 'no_match') found.other++;
    }
    expect(found.strong).toBe(0);
    // the union bound promises at most 0.1 expected; 2 leaves room for an unlucky seed, not for a broken bound
    expect(found.other).toBeLessThanOrEqual(2);
  });

  it('gives no match when nobody streamed the content marked, or the leak holds no segment', () => {
    const u = rng(10);
    expect(match(leakOf(randomId(u), range(0, 10), 12, u), [])).toMatchObject({
      classification: 'no_match',
      markProbability: 1,
      candidates: 0,
    });
    const r = match([], [{ viewerId: 'v', binaryId: '0'.repeat(40) }]);
    expect(r).toMatchObject({
      classification: 'no_match',
      markProbability: 1,
      binaryId: '?'.repeat(40),
      supportedBits: 0,
    });
  });

  it('gives no match, naming the stand-in, when only the plain copy of unmarked sessions fits; a viewer who fits too is a tie', () => {
    const u = rng(13);
    const all = viewers(20);
    const standIn = { viewerId: 'unmarked-sessions', binaryId: allAId(RULE) };
    const options = { mask: key.mask, rule: RULE, standIns: [standIn.viewerId] };
    const zeros = range(0, 30).map((index) => ({ index, z: 9 + gauss(u) }));
    expect(matchCandidates(zeros, [standIn, ...all], options)).toMatchObject({
      classification: 'no_match',
      standIn: 'unmarked-sessions',
    });
    // served A on segments 0–29 and B on 30–39
    const twinBits = [...standIn.binaryId];
    for (const s of range(30, 40))
      twinBits[positionOf(RULE, s)] = standIn.binaryId[positionOf(RULE, s)] === '0' ? '1' : '0';
    const twin = { viewerId: 'a-on-the-first-30', binaryId: twinBits.join('') };
    const tie = matchCandidates(zeros, [standIn, twin, ...all], options);
    expect(tie.classification).toBe('weak_match');
    expect(tie.candidateSet.map((c) => c.viewerId)).toEqual(['a-on-the-first-30', 'unmarked-sessions']);
  });

  it('gives no match when the mark is there but no bit position is decided', () => {
    const u = rng(11);
    const all = viewers(20);
    const r = match(leakOf((all[0] as Candidate).binaryId, range(0, 10), 2.5, u, 0), all);
    expect(r.markProbability).toBeLessThan(1e-6);
    expect(r.classification).toBe('no_match');
    expect(r.decidedBits).toBe(0);
  });
});

describe('readings', () => {
  it('counts every reading the detector scored in the mark figure: two orientations read, twice the chance', () => {
    const u = rng(13);
    const all = viewers(20);
    const leak = leakOf((all[3] as Candidate).binaryId, range(0, 3), 3.2, u, 0);
    const once = match(leak, all);
    const twice = matchCandidates(leak, all, { mask: key.mask, rule: RULE, readingsTried: 2 });
    expect(once.markProbability).toBeGreaterThan(1e-12);
    expect(twice.markProbability).toBeCloseTo(2 * once.markProbability, 15);
  });

  it('counts segments s and s + 40 of a long leak as two readings of the same bit', () => {
    const u = rng(12);
    const all = viewers(2);
    const viewer = (all[0] as Candidate).binaryId;
    const leak = leakOf(viewer, range(0, 45), 12, u, 0);
    // alone, neither reading of bit 0 is decided (3 < 4); together they are: 6 / √2 ≈ 4.24
    for (const s of leak) if (s.index % 40 === 0) s.z = signFor(viewer, 0, RULE) * 3;
    const r = match(leak, all);
    expect(r.segments).toBe(45);
    expect(r.decidedBits).toBe(40);
    expect(r.readout).toBe(viewer);
  });

  it('rejects a malformed binaryId and a repeated segment with a RangeError', () => {
    const ok = { viewerId: 'ok', binaryId: '01'.repeat(20) };
    expect(() => match([], [ok, { viewerId: 'short', binaryId: '0101' }])).toThrow(RangeError);
    expect(() =>
      match(
        [
          { index: 1, z: 5 },
          { index: 1, z: 5 },
        ],
        [ok],
      ),
    ).toThrow(RangeError);
  });

  it('under the fixed rule of older content, predicts variant A (+1) for bit 0 and B (−1) for bit 1, bit s mod 40 for segment s', () => {
    const id = `01${'0'.repeat(38)}`;
    const fixed = [0, 1, 41, 80].map((s) => signFor(id, s, FIXED_RULE));
    expect(fixed).toEqual([1, -1, -1, 1]);
  });
});
