// Matching at scale: `npm run bench:matching -- [--candidates 10000,100000,1000000] [--segments 24] [--runs 5] [--json]`.
//
// A leak's per-segment scores matched against N candidates of one content (src/domain/forensics/matching/
// matching.ts), as `drm analyze` does after detection: the median of --runs timed runs after a
// warm-up, beside packIds alone on the same candidates in the same run (parsing every
// candidate's id once is the floor any matching pays). Candidates carry code-word ids as drm
// allocates them (src/domain/identity/); the leaker is one of them, its segments read at
// |z| 6–10 with some noise. Target: 1,000,000 candidates in ≤ 5 s. Prints numbers; not a test.
import Table from 'cli-table3';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { codeWord, wordToBinaryId } from '../../src/domain/identity/nested-code.js';
import { viewerIdKey } from '../../src/domain/identity/viewer-ids.js';
import { matchCandidates } from '../../src/domain/forensics/matching/matching.js';
import { type Candidate, packIds } from '../../src/domain/forensics/matching/packed-ids.js';
import { median } from '../stats.js';
import { FIXED_RULE } from '../../src/watermark/segment-rule.js';

const { values } = parseArgs({
  options: {
    candidates: { type: 'string', default: '10000,100000,1000000' },
    segments: { type: 'string', default: '24' },
    runs: { type: 'string', default: '5' },
    json: { type: 'boolean', default: false },
  },
});
const sizes = values.candidates.split(',').map(Number);
const segmentCount = Number(values.segments);
const runs = Math.max(1, Number(values.runs));
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
const key = viewerIdKey(Buffer.alloc(32, 17));

/**
 * N distinct ids of the codes drm draws from. The keyed permutation only reorders which messages
 * are taken (and costs ~30 µs an id to compute), so the bench takes messages 0 … N−1 directly.
 */
function codeWordCandidates(n: number): Candidate[] {
  return Array.from({ length: n }, (_, i) => ({
    viewerId: `viewer-${i}`,
    binaryId: wordToBinaryId(codeWord(BigInt(i)) ^ key.mask),
  }));
}

function leakOf(leaker: string): { index: number; z: number }[] {
  return Array.from({ length: segmentCount }, (_, s) => ({
    index: s,
    z: (leaker[s % 40] === '0' ? 1 : -1) * (6 + 4 * Math.random()) + (Math.random() - 0.5),
  }));
}

const ms = (f: () => unknown) => {
  const t0 = performance.now();
  f();
  return performance.now() - t0;
};

const rows = [];
for (const n of sizes) {
  log(`${n} candidates: making their ids`);
  const candidates = codeWordCandidates(n);
  const leaker = candidates[Math.floor(n / 3)] as Candidate;
  const segments = leakOf(leaker.binaryId);
  const result = matchCandidates(segments, candidates, { mask: key.mask, rule: FIXED_RULE }); // warm-up, and the outcome to print
  const matchMs: number[] = [];
  const packMs: number[] = [];
  for (let r = 0; r < runs; r++) {
    packMs.push(ms(() => packIds(candidates)));
    matchMs.push(ms(() => matchCandidates(segments, candidates, { mask: key.mask, rule: FIXED_RULE })));
  }
  rows.push({
    candidates: n,
    matchMs: median(matchMs),
    runs: matchMs,
    packMs: median(packMs),
    ratio: median(matchMs) / median(packMs),
    outcome: `${result.classification}${result.matched?.viewerId === leaker.viewerId ? ' (the leaker)' : ''}`,
    identification: result.identificationProbability,
  });
}

if (values.json) {
  process.stdout.write(
    `${JSON.stringify({ segments: segmentCount, runs, cpus: os.availableParallelism(), rows }, null, 2)}\n`,
  );
} else {
  process.stdout.write(
    `Matching a ${segmentCount}-segment leak, ${runs} run(s) after a warm-up, medians, ${os.availableParallelism()} CPUs, Node ${process.version}\n`,
  );
  const table = new Table({
    head: ['candidates', 'match ms', 'runs', 'packIds alone ms', 'match / packIds', 'outcome', 'identification'],
    style: { head: [], border: [] },
  });
  for (const r of rows) {
    table.push([
      r.candidates.toLocaleString('en'),
      r.matchMs.toFixed(0),
      r.runs.map((x) => x.toFixed(0)).join(' '),
      r.packMs.toFixed(0),
      `${r.ratio.toFixed(2)}×`,
      r.outcome,
      r.identification.toExponential(1),
    ]);
  }
  process.stdout.write(`${table.toString()}\n`);
}
