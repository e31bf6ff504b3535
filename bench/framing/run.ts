// Framing an innocent: `npm run bench:framing -- [--viewers 1000000] [--margins 0,8,16] [--splices 10000] [--aimed 2000] [--averaged 10000] [--per-segment 10000] [--json]`.
//
// Colluding viewers make a copy out of theirs; an innocent is framed when the leak would give a
// strong match on a viewer who did not collude. Counted among --viewers allocated ids, for code-word
// ids with each of --margins spare dimensions (drm's is ID_MARGIN, src/domain/identity/viewer-ids.ts)
// and for as many ids drawn at random:
//   random:   two colluders take each bit position's segments from one of them at random;
//   aimed:    two colluders who know the public code and where their ids differ make the splice a
//             code word (./attacks.ts, exact search);
//   minority: three colluders take the odd one out wherever they differ (a XOR b XOR c), which
//             needs no code at all;
//   averaged: two colluders average their copies (segments where they differ read as undecided),
//             run through the real matcher;
//   per segment: two colluders splice a 60-segment copy segment by segment at random, so a bit
//             position read twice may read both ways, run through the real matcher.
// A splice read in full names the id it spells: the matcher's best fits all 40 bits read at
// |z| ≈ 8, its false-positive bound is far below 1e-300 and a runner-up at distance d adds
// exp(−32·d) to the confusion, so the match is strong exactly when that id is allocated.
// Prints numbers; not a test.
import Table from 'cli-table3';
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { CODE_LEVELS } from '../../src/domain/identity/nested-code.js';
import { viewerIdKey } from '../../src/domain/identity/viewer-ids.js';
import { aimedSplices, averagedCopies, minoritySplices, perSegmentSplices, randomSplices } from './attacks.js';
import { codeWordPopulation, type Population, randomPopulation } from './populations.js';

const { values } = parseArgs({
  options: {
    viewers: { type: 'string', default: '1000000' },
    margins: { type: 'string', default: '0,8,16' },
    splices: { type: 'string', default: '10000' },
    aimed: { type: 'string', default: '2000' },
    averaged: { type: 'string', default: '10000' },
    'per-segment': { type: 'string', default: '10000' },
    json: { type: 'boolean', default: false },
  },
});
const viewers = Number(values.viewers);
const margins = values.margins.split(',').map(Number);
const trials = {
  splices: Number(values.splices),
  aimed: Number(values.aimed),
  averaged: Number(values.averaged),
  perSegment: Number(values['per-segment']),
};
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const seconds = (since: number) => `${((performance.now() - since) / 1000).toFixed(0)} s`;

/** Random ids have no code: their colluders aim with the smallest code that would hold as many ids. */
const denseDimension = (CODE_LEVELS.find((l) => viewers <= 2 ** l.dimension) ?? CODE_LEVELS[CODE_LEVELS.length - 1])
  ?.dimension as number;

function attackAll(p: Population) {
  let started = performance.now();
  const random = randomSplices(p, trials.splices);
  const minority = minoritySplices(p, trials.splices);
  const aimed = aimedSplices(p, trials.aimed, p.dimension ?? denseDimension);
  log(`${p.name}: splices in ${seconds(started)}`);
  started = performance.now();
  const averaged = averagedCopies(p, trials.averaged);
  log(`${p.name}: averaged copies in ${seconds(started)}`);
  started = performance.now();
  const perSegment = perSegmentSplices(p, trials.perSegment);
  log(`${p.name}: per-segment splices in ${seconds(started)}`);
  return { ids: p.name, random, minority, aimed, averaged, perSegment };
}

const makers: (() => Population)[] = [
  ...margins.map((margin) => () => codeWordPopulation(viewers, margin, viewerIdKey(randomBytes(32)))),
  () => randomPopulation(viewers),
];
const rows = [];
for (const make of makers) {
  const started = performance.now();
  const p = make();
  log(`${p.name}: ${viewers} ids in ${seconds(started)}`);
  rows.push(attackAll(p));
}

if (values.json) {
  process.stdout.write(`${JSON.stringify({ viewers, trials, rows }, null, 2)}\n`);
} else {
  process.stdout.write(`Innocents framed by colluders' copies, among ${viewers.toLocaleString('en')} viewers\n`);
  const table = new Table({
    head: [
      'ids',
      `random 2-splices (of ${trials.splices})`,
      `aimed 2-splices: possible / framed (of ${trials.aimed})`,
      `3-way minority (of ${trials.splices})`,
      `averaged: framed / colluder named (of ${trials.averaged})`,
      `per-segment 60-segment splices: framed / colluder named (of ${trials.perSegment})`,
    ],
    style: { head: [], border: [] },
  });
  for (const r of rows)
    table.push([
      r.ids,
      r.random,
      `${r.aimed.possible} / ${r.aimed.framed}`,
      r.minority,
      `${r.averaged.framed} / ${r.averaged.colluderNamed}`,
      `${r.perSegment.framed} / ${r.perSegment.colluderNamed}`,
    ]);
  process.stdout.write(`${table.toString()}\n`);
}
