// Verdicts against the truth: `npm run bench:verdicts -- [--viewers 20,10000,1000000] [--trials 1000] [--leakers 200] [--reading FILE] [--json]`.
//
// For each population (drm's ids, ID_MARGIN, the first N counters of a fresh key) and each family
// of leaks (./leaks.ts: one viewer's copy of 1–40 segments; 2- and 3-way splices, averages and the
// 3-way minority of 10–60 segments), --trials leaks read as the detector reads them go through the
// real matcher. Printed: the verdicts, innocents named (the goal is 0), sources named, and, where
// one candidate alone fit, how often that candidate was no source, per decade of the
// identification figure. Then the shortest leak an honest strong_match names, over --leakers
// leakers × 5 starts. Strengths |z| are drawn from 6–10, or from a saved reading (bench:shortest-leak
// writes reading.json in its --work). Prints numbers; not a test.
import Table from 'cli-table3';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { ID_MARGIN, viewerIdKey } from '../../src/domain/identity/viewer-ids.js';
import { levelCensus } from '../../src/domain/forensics/matching/id-levels.js';
import { matchPackedCandidates } from '../../src/domain/forensics/matching/matching.js';
import { packCandidates } from '../../src/domain/forensics/matching/packed-ids.js';
import { wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { codeWordPopulation } from '../framing/populations.js';
import { FAMILIES, type Family, lengthIn, makeLeak } from './leaks.js';
import { shortestHonest } from './shortest.js';
import { DECADES, emptyTally, record, type Tally } from './tally.js';

const { values } = parseArgs({
  options: {
    viewers: { type: 'string', default: '20,10000,1000000' },
    trials: { type: 'string', default: '1000' },
    leakers: { type: 'string', default: '200' },
    reading: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const sizes = values.viewers.split(',').map(Number);
const trials = Number(values.trials);
const leakers = Number(values.leakers);
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const strengths: number[] = values.reading
  ? (JSON.parse(fs.readFileSync(values.reading, 'utf8')) as number[]).map(Math.abs)
  : Array.from({ length: 41 }, (_, i) => 6 + i / 10);

function run(n: number) {
  let started = performance.now();
  const p = codeWordPopulation(n, ID_MARGIN, viewerIdKey(randomBytes(32)));
  const candidates = packCandidates(p.ids.map((w, i) => ({ viewerId: String(i), binaryId: wordToBinaryId(w) })));
  const census = levelCensus(candidates, p.mask);
  log(`${n} viewers: ids made in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const families: Record<string, Tally> = {};
  for (const family of FAMILIES) {
    started = performance.now();
    const t = emptyTally();
    for (let i = 0; i < trials; i++) {
      const length = family === 'single' ? lengthIn(1, 40) : lengthIn(10, 60);
      const leak = makeLeak(family as Family, length, p.ids, strengths);
      const r = matchPackedCandidates(leak.segments, candidates, { mask: p.mask, census });
      const fits = (c: number) =>
        [...r.readout].every((bit, b) => bit === '?' || bit === wordToBinaryId(p.ids[c] as bigint)[b]);
      record(t, r, new Set(leak.sources.map(String)), leak.sources.filter(fits).length);
    }
    families[family] = t;
    log(
      `${n} viewers, ${family}: ${trials} leaks in ${((performance.now() - started) / 1000).toFixed(0)} s, innocents named ${t.innocentsNamed}`,
    );
  }
  const shortest = shortestHonest(p, candidates, census, leakers, strengths);
  return { viewers: n, level: p.name, families, shortest };
}

const results = sizes.map(run);
if (values.json) {
  process.stdout.write(`${JSON.stringify({ trials, cpus: os.availableParallelism(), results }, null, 2)}\n`);
} else {
  for (const r of results) {
    const head = [
      'leaks',
      'trials',
      'strong_match',
      'innocents named',
      'sources named',
      'weak_match',
      'mixed_copy',
      'pairs named',
      'innocents in them',
      'no_match',
    ];
    const verdicts = new Table({ head, style: { head: [], border: [] } });
    for (const [family, t] of Object.entries(r.families)) {
      verdicts.push([
        family,
        t.trials,
        t.strong,
        t.innocentsNamed,
        t.sourcesNamed,
        t.weak,
        t.mixed,
        t.pairsNamed,
        t.innocentsInPairs,
        t.none,
      ]);
    }
    process.stdout.write(
      `\n${r.viewers.toLocaleString('en')} viewers (${r.level}): verdicts\n${verdicts.toString()}\n`,
    );
    const calibration = new Table({
      head: ['identification figure', 'leaks', 'an innocent fit every decided bit', 'rate'],
      style: { head: [], border: [] },
    });
    for (let d = 0; d < DECADES; d++) {
      const sum = Object.values(r.families).reduce(
        (acc, t) => ({
          leaks: acc.leaks + (t.calibration[d]?.leaks ?? 0),
          innocent: acc.innocent + (t.calibration[d]?.innocent ?? 0),
        }),
        { leaks: 0, innocent: 0 },
      );
      const range = d === 0 ? '≥ 1e-1' : d === DECADES - 1 ? `< 1e-${d}` : `[1e-${d + 1}, 1e-${d})`;
      calibration.push([
        range,
        sum.leaks,
        sum.innocent,
        sum.leaks === 0 ? '-' : (sum.innocent / sum.leaks).toExponential(1),
      ]);
    }
    process.stdout.write(
      `the identification figure against the truth (all families): how often did an innocent fit?\n${calibration.toString()}\n`,
    );
    const s = r.shortest;
    process.stdout.write(
      `shortest leak with an honest strong_match (${s.leakers} leakers × 5 starts): median ${s.median} segments, 95% ${s.p95}, longest ${s.max}; ` +
        `checked with the real matcher: ${s.confirmed} of ${s.checked} strong at that length and not one shorter\n`,
    );
  }
}
