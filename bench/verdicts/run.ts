// Verdicts against the truth: `npm run bench:verdicts -- [--viewers 20,10000,1000000] [--trials 1000]
// [--leakers 200] [--coalitions 100 (a fifth past 1,000 viewers, a twentieth past 100,000)] [--reading FILE]
// [--segment-seconds 10] [--only shortest] [--json]`.
//
// For each population (drm's ids, ID_MARGIN, the first N counters of a fresh key) and each family of
// leaks (./leaks.ts), --trials leaks read as the detector reads them go through the real matcher,
// each under a keyed segment rule of its own. Then colluders who know a victim's pattern from
// another film splice their copies to it (./known-victim.ts), under keyed rules and, for contrast,
// under one fixed rule for both films; coalitions that search for splices one innocent alone fits
// (./chosen.ts); and the shortest leak an honest strong_match names. Strengths |z| are drawn from
// 6–10, or from a saved reading (bench:shortest-leak writes reading.json in its --work, bench:attacks
// --reading-out one of its marked copy). --segment-seconds says how long the reading's segments were,
// so the shortest leak is given in seconds too; --only shortest runs that alone. Prints numbers; not a test.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { levelCensus } from '../../src/domain/forensics/matching/id-levels.js';
import { matchPackedCandidates } from '../../src/domain/forensics/matching/matching.js';
import { type PackedCandidates, packCandidates } from '../../src/domain/forensics/matching/packed-ids.js';
import { wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { ID_MARGIN, viewerIdKey } from '../../src/domain/identity/viewer-ids.js';
import { FIXED_RULE, keyedRule, type SegmentRule, segmentSecondsOption } from '../../src/watermark/segment-rule.js';
import { codeWordPopulation, type Population } from '../framing/populations.js';
import { chosenSplices } from './chosen.js';
import { framableVictim, spliceToVictim } from './known-victim.js';
import { FAMILIES, lengthOf, makeLeak } from './leaks.js';
import { printResults, printShortest, type VictimTally } from './print.js';
import { shortestHonest } from './shortest.js';
import { emptyTally, record, type Tally } from './tally.js';

const { values } = parseArgs({
  options: {
    viewers: { type: 'string', default: '20,10000,1000000' },
    trials: { type: 'string', default: '1000' },
    leakers: { type: 'string', default: '200' },
    coalitions: { type: 'string', default: '100' },
    reading: { type: 'string' },
    'segment-seconds': { type: 'string', default: '10' },
    only: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const sizes = values.viewers.split(',').map(Number);
const trials = Number(values.trials);
const leakers = Number(values.leakers);
const coalitions = Number(values.coalitions);
const segmentSeconds = segmentSecondsOption(values['segment-seconds']);
if (values.only !== undefined && values.only !== 'shortest') throw new Error('--only takes shortest');
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const strengths: number[] = values.reading
  ? (JSON.parse(fs.readFileSync(values.reading, 'utf8')) as number[]).map(Math.abs)
  : Array.from({ length: 41 }, (_, i) => 6 + i / 10);
const freshRule = () => keyedRule(randomBytes(32), 'bench');

function timed<T>(what: string, work: () => T): T {
  const started = performance.now();
  const result = work();
  log(`${what} in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  return result;
}

interface Setup {
  p: Population;
  candidates: PackedCandidates;
  census: ReturnType<typeof levelCensus>;
}

function families(s: Setup): Record<string, Tally> {
  const out: Record<string, Tally> = {};
  for (const family of FAMILIES) {
    const t = emptyTally();
    timed(`${s.p.ids.length} viewers, ${family}: ${trials} leaks`, () => {
      for (let i = 0; i < trials; i++) {
        const rule = freshRule();
        const leak = makeLeak(family, lengthOf(family), s.p.ids, strengths, rule);
        const r = matchPackedCandidates(leak.segments, s.candidates, { mask: s.p.mask, rule, census: s.census });
        const fits = (c: number) =>
          [...r.readout].every((bit, b) => bit === '?' || bit === wordToBinaryId(s.p.ids[c] as bigint)[b]);
        record(t, r, new Set(leak.sources.map(String)), leak.sources.filter(fits).length);
      }
    });
    out[family] = t;
  }
  return out;
}

/** Colluders who learned a victim's pattern on film X splice their copies of film Y to it. */
function knownVictim(s: Setup, rules: () => { x: SegmentRule; y: SegmentRule }): VictimTally {
  const t: VictimTally = { trials, strong: 0, innocentsNamed: 0, victimNamed: 0, victimFits: 0, implicated: 0 };
  for (let i = 0; i < trials; i++) {
    const { x, y } = rules();
    const who = framableVictim(s.p);
    const leak = spliceToVictim(s.p, who, x, y, strengths);
    const r = matchPackedCandidates(leak.segments, s.candidates, { mask: s.p.mask, rule: y, census: s.census });
    const victim = String(who.victim);
    const named = r.matched?.viewerId;
    if (r.classification === 'strong_match') t.strong++;
    if (named !== undefined && !who.colluders.includes(Number(named))) t.innocentsNamed++;
    if (named === victim) t.victimNamed++;
    if ([...r.readout].every((bit, b) => bit === '?' || bit === wordToBinaryId(s.p.ids[who.victim] as bigint)[b]))
      t.victimFits++;
    t.implicated += r.mixed?.suspects.filter((c) => !who.colluders.includes(Number(c.viewerId))).length ?? 0;
  }
  return t;
}

function setUp(n: number): Setup {
  const p = timed(`${n} viewers: ids made`, () => codeWordPopulation(n, ID_MARGIN, viewerIdKey(randomBytes(32))));
  const candidates = packCandidates(p.ids.map((w, i) => ({ viewerId: String(i), binaryId: wordToBinaryId(w) })));
  return { p, candidates, census: levelCensus(candidates, p.mask) };
}

const shortestOf = (s: Setup) =>
  timed(`${s.p.ids.length} viewers, shortest`, () => shortestHonest(s.p, s.candidates, s.census, leakers, strengths));

function run(n: number) {
  const s = setUp(n);
  const { p, candidates } = s;
  const byFamily = families(s);
  const victims = {
    keyed: timed(`${n} viewers, known victim, keyed`, () => knownVictim(s, () => ({ x: freshRule(), y: freshRule() }))),
    fixed: timed(`${n} viewers, known victim, fixed`, () => knownVictim(s, () => ({ x: FIXED_RULE, y: FIXED_RULE }))),
  };
  // a verdict that finds nobody fitting counts the coalitions that explain it: some 0.1 s among 10,000 candidates,
  // and a scan of a million takes 50 ms, so fewer coalitions try there
  const tried = Math.ceil(n > 100_000 ? coalitions / 20 : n > 1000 ? coalitions / 5 : coalitions);
  const chosen = ([2, 3] as const).map((size) =>
    timed(`${n} viewers, chosen splices of ${size}`, () =>
      chosenSplices(p, candidates, s.census, { coalitions: tried, perCoalition: 50, size, strengths }),
    ),
  );
  const shortest = shortestOf(s);
  return { viewers: n, level: p.name, families: byFamily, victims, chosen, shortest };
}

if (values.only === 'shortest') {
  const rows = sizes.map((n) => {
    const s = setUp(n);
    return { viewers: n, level: s.p.name, shortest: shortestOf(s) };
  });
  if (values.json) process.stdout.write(`${JSON.stringify({ segmentSeconds, rows }, null, 2)}\n`);
  else printShortest(rows, segmentSeconds);
} else {
  const results = sizes.map(run);
  if (values.json) {
    const out = { trials, segmentSeconds, cpus: os.availableParallelism(), results };
    process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  } else printResults(results, segmentSeconds);
}
