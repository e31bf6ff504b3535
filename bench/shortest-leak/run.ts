// Shortest leak: `npm run bench:shortest-leak -- [--input FILE] [--minutes 4] [--viewers 10000] [--trials 1000] [--leakers 200] [--naming 10000,1000000] [--naming-only] [--work DIR] [--json]`.
//
// The shortest leak that still gives strong_match among 10,000 candidates (simulated
// viewers with real binaryIds: drawn as drm draws them, each at Hamming distance ≥ 9 from the
// others) after 720p CRF 28, with no false match in 1,000 trials on unmarked or wrong content.
// Target: ≤ 200 s of leak.
//
// A --minutes film (the clip played over, each pass flipped or zoomed: ../film.ts) is marked
// for one of the viewers (embedVideo, with its detection reference from the same decode) and
// the copy is re-encoded at 720p CRF 28: the leak. The detector reads it once; a leak of L
// seconds holds the first L/10 segments, so matching over those segments against every
// candidate gives the classification at each length. The shortest length found is then checked
// for real: the copy cut to that length, re-encoded the same way, analysed from scratch.
// Null trials: the detector also scores every segment against patterns of keys that were never
// used (a wrong content reads exactly so); half the trials on the leak, half on the unmarked film
// through the same 720p CRF 28, each trial matched over the whole length against all candidates.
// Naming (./naming.ts): with this reading's strength per segment, the shortest strong
// leak over --leakers leakers and 5 starting segments among each of --naming viewers, for drm's
// ids, code words without a margin and random ids. --naming-only runs just that, with the reading
// a full run left in --work (reading.json), or |z| 6–10 without one.
import Table from 'cli-table3';
import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { createCpuPoolBackend } from '../../gpu/cpu-pool.js';
import { allocateBinaryId } from './random-ids.js';
import { matchCandidates, signFor } from '../../src/domain/forensics/matching/matching.js';
import { mediaBinaries } from '../../src/media/binaries.js';
import { probeMedia } from '../../src/media/probe.js';
import { watermarkKey } from '../../src/watermark/keyed-random.js';
import { VIDEO_REFERENCE } from '../../src/watermark/video/reference.js';
import type { SegmentReading } from '../../src/watermark/segments.js';
import { detectVideo } from '../../src/watermark/video/detect.js';
import { embedVideo } from '../../src/watermark/video/embed.js';
import { filmArgs } from '../film.js';
import { namingTable, printNaming } from './naming.js';
import { corpusFile } from '../corpus.js';
import { FIXED_RULE } from '../../src/watermark/segment-rule.js';

const { values } = parseArgs({
  options: {
    input: { type: 'string', default: '/tmp/corpus/photo-1080p-60s.mp4' },
    minutes: { type: 'string', default: '4' },
    viewers: { type: 'string', default: '10000' },
    trials: { type: 'string', default: '1000' },
    leakers: { type: 'string', default: '200' },
    naming: { type: 'string', default: '10000,1000000' },
    'naming-only': { type: 'boolean', default: false },
    work: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const namingSizes = values.naming.split(',').map(Number);
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);
if (values['naming-only']) {
  const saved = values.work && path.join(path.resolve(values.work), 'reading.json');
  const magnitudes =
    saved && fs.existsSync(saved)
      ? (JSON.parse(fs.readFileSync(saved, 'utf8')) as number[])
      : Array.from({ length: 40 }, () => 6 + 4 * Math.random());
  log(
    saved && fs.existsSync(saved)
      ? `segment strengths from ${saved}`
      : 'segment strengths |z| 6–10 (no reading.json in --work)',
  );
  const rows = namingTable(namingSizes, magnitudes, Number(values.leakers), log);
  process.stdout.write(
    values.json ? `${JSON.stringify({ naming: rows }, null, 2)}\n` : printNaming(rows, Number(values.leakers)),
  );
  process.exit(0);
}
corpusFile(values.input);
const seconds = Number(values.minutes) * 60;
const viewerCount = Number(values.viewers);
const trials = Number(values.trials);
const bins = mediaBinaries();
const work = values.work ? path.resolve(values.work) : fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-shortest-'));
fs.mkdirSync(work, { recursive: true });
const ff = (...args: string[]) => execFileSync(bins.ffmpeg, ['-v', 'error', '-y', ...args]);
const backend = createCpuPoolBackend();
const file = (name: string) => path.join(work, name);
/** The attack the issue names: to 720p, x264 CRF 28. */
const attack = (input: string, output: string, extra: string[] = []) =>
  ff(
    '-i',
    input,
    ...extra,
    '-map',
    '0:v:0',
    '-vf',
    'scale=-2:720',
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '28',
    output,
  );

// 1. The film, its reference, the leaker's copy, the leak and the candidates (kept in --work for the next run).
const setupFile = file('setup.json');
type Setup = { key: string; contentId: string; ids: string[]; input: string; seconds: number };
let setup = fs.existsSync(setupFile) ? (JSON.parse(fs.readFileSync(setupFile, 'utf8')) as Setup) : undefined;
if (
  setup &&
  (setup.input !== path.resolve(values.input) || setup.seconds !== seconds || setup.ids.length !== viewerCount)
)
  throw new Error(`${work} holds another setup: use another --work`);
if (setup) log(`reusing the film, the leak and the ${viewerCount} viewer ids in ${work}`);
else {
  // The candidates: the first is the viewer whose copy leaks.
  log(`drawing ${viewerCount} viewer ids, each at distance ≥ 9 from the others`);
  const ids: string[] = [];
  for (let i = 0; i < viewerCount; i++) ids.push(allocateBinaryId(ids));
  const info = await probeMedia(bins, values.input);
  log(`making a ${seconds}-s film of ${path.basename(values.input)}`);
  ff(...filmArgs(values.input, info, seconds), file('film.mp4'));
  setup = {
    key: randomBytes(32).toString('hex'),
    contentId: randomUUID(),
    ids,
    input: path.resolve(values.input),
    seconds,
  };
  log("marking the leaker's copy (and writing the film's reference)");
  await embedVideo({
    rule: FIXED_RULE,
    bins,
    key: watermarkKey(Buffer.from(setup.key, 'hex')),
    contentId: setup.contentId,
    input: file('film.mp4'),
    output: file('copy.mp4'),
    bits: ids[0] as string,
    backend,
    reference: file(VIDEO_REFERENCE),
    preset: 'superfast',
    crf: 18,
  });
  log('re-encoding the copy and the unmarked film at 720p CRF 28');
  attack(file('copy.mp4'), file('leak.mp4'));
  attack(file('film.mp4'), file('unmarked.mp4'));
  fs.rmSync(file('film.mp4'), { force: true });
  fs.writeFileSync(setupFile, JSON.stringify(setup));
}
const candidates = setup.ids.map((binaryId, i) => ({ viewerId: `viewer-${i}`, binaryId }));
/** The ids are drawn at random (./random-ids.ts): no code, no mask. */
const RANDOM_IDS = { mask: 0n, rule: FIXED_RULE };
const leaker = candidates[0] as { viewerId: string; binaryId: string };
const key = watermarkKey(Buffer.from(setup.key, 'hex'));
const detect = (leak: string, nulls = 0) =>
  detectVideo({
    rule: FIXED_RULE,
    bins,
    key,
    contentId: setup.contentId,
    leak,
    original: file(VIDEO_REFERENCE),
    reference: true,
    backend,
    nullPatterns: nulls,
  });

// 3. One detection of the whole leak; each length L holds its first L/10 segments.
log('reading the whole leak');
const half = Math.ceil(trials / 2);
const whole = await detect(file('leak.mp4'), half);
// Each segment's strength towards the leaker's variant (negative where it was read wrongly), for --naming-only.
fs.writeFileSync(
  file('reading.json'),
  JSON.stringify(whole.segments.map((g) => g.z * signFor(setup.ids[0] as string, g.index, FIXED_RULE))),
);
const rows: Array<{ seconds: number; classification: string; right: boolean; fp: number; confusion: number }> = [];
for (let n = 1; n <= whole.segments.length; n++) {
  const held = whole.segments.filter((s) => s.index < n);
  const m = matchCandidates(held, candidates, RANDOM_IDS);
  rows.push({
    seconds: FIXED_RULE.segmentSeconds * n,
    classification: m.classification,
    right: m.matched?.viewerId === leaker.viewerId,
    fp: m.markProbability,
    confusion: m.identificationProbability,
  });
}
/** The shortest length from which every longer one is strong_match for `who`, in seconds. */
function shortestFor(segments: readonly SegmentReading[], who: string): number | undefined {
  let from: number | undefined;
  for (let n = segments.length; n >= 1; n--) {
    const m = matchCandidates(
      segments.filter((g) => g.index < n),
      candidates,
      RANDOM_IDS,
    );
    if (m.classification !== 'strong_match' || m.matched?.viewerId !== who) break;
    from = FIXED_RULE.segmentSeconds * n;
  }
  return from;
}
const strongFrom = rows.findIndex((_, i) => rows.slice(i).every((x) => x.classification === 'strong_match' && x.right));
const shortest = strongFrom >= 0 ? (rows[strongFrom] as (typeof rows)[number]).seconds : undefined;

// 3b. Other leakers. The shortest leak depends on the leaker's id as much as on the mark: it is
// strong once no other id agrees with it on every bit held. The same reading with its signs set
// by another drawn id is what that viewer's copy would give (variants A and B are ±δ alike), so
// each of the first --leakers ids is matched as the leaker at every length.
const leakerCount = Math.min(Number(values.leakers), candidates.length);
const others: Array<number | undefined> = [];
for (let k = 0; k < leakerCount; k++) {
  const who = candidates[k] as { viewerId: string; binaryId: string };
  const flipped = whole.segments.map((g) => ({
    ...g,
    z: g.z * signFor(leaker.binaryId, g.index, FIXED_RULE) * signFor(who.binaryId, g.index, FIXED_RULE),
  }));
  others.push(shortestFor(flipped, who.viewerId));
}
const found = others.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
const quantile = (q: number) => found[Math.min(found.length - 1, Math.ceil(q * found.length) - 1)];
const spread = {
  leakers: leakerCount,
  none: leakerCount - found.length,
  median: quantile(0.5),
  p90: quantile(0.9),
  p95: quantile(0.95),
  max: found[found.length - 1],
  within200: found.filter((x) => x <= 200).length,
};

// 4. The shortest length for real: cut, attacked, analysed from scratch.
let check: { classification: string; right: boolean; segments: number } | undefined;
if (shortest !== undefined) {
  log(`checking ${shortest} s for real: the copy cut to ${shortest} s, 720p CRF 28, analysed`);
  attack(file('copy.mp4'), file('cut.mp4'), ['-t', String(shortest)]);
  const cut = await detect(file('cut.mp4'));
  const m = matchCandidates(cut.segments, candidates, RANDOM_IDS);
  check = {
    classification: m.classification,
    right: m.matched?.viewerId === leaker.viewerId,
    segments: cut.segments.length,
  };
}

// 5. Null trials: patterns of keys never used, on the leak (a wrong content) and on the unmarked film.
log('reading the unmarked film');
const unmarked = await detect(file('unmarked.mp4'), trials - half);
const trialSegments = (segments: SegmentReading[], t: number) =>
  segments.map((s) => ({ index: s.index, z: (s.nullZ as number[])[t] as number }));
const outcomes = { strong_match: 0, weak_match: 0, mixed_copy: 0, no_match: 0 };
let smallestFp = 1;
for (const [segments, n] of [
  [whole.segments, half],
  [unmarked.segments, trials - half],
] as const) {
  for (let t = 0; t < n; t++) {
    const m = matchCandidates(trialSegments(segments, t), candidates, RANDOM_IDS);
    outcomes[m.classification]++;
    smallestFp = Math.min(smallestFp, m.markProbability);
  }
}
const unmarkedReal = matchCandidates(unmarked.segments, candidates, RANDOM_IDS);
await backend.close();
log(`naming among ${namingSizes.join(', ')} viewers with this reading's strengths`);
const naming = namingTable(
  namingSizes,
  whole.segments.map((g) => g.z * signFor(leaker.binaryId, g.index, FIXED_RULE)),
  leakerCount,
  log,
);
if (!values.work) fs.rmSync(work, { recursive: true, force: true });

const result = {
  viewers: viewerCount,
  leakSeconds: seconds,
  shortest,
  check,
  rows,
  otherLeakers: spread,
  trials: { count: trials, ...outcomes, smallestFalsePositiveProbability: smallestFp },
  unmarkedWithRealKey: unmarkedReal.classification,
  naming,
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} else {
  process.stdout.write(
    `Shortest leak among ${viewerCount} viewers, 720p CRF 28 (${path.basename(values.input)} played to ${seconds} s), ${os.availableParallelism()} CPUs\n`,
  );
  const table = new Table({
    head: ['leak', 'classification', 'right viewer', 'false positive', 'confusion'],
    style: { head: [], border: [] },
  });
  for (const r of rows)
    table.push([
      `${r.seconds} s`,
      r.classification,
      r.right ? 'yes' : 'no',
      r.fp.toExponential(1),
      r.confusion.toExponential(1),
    ]);
  process.stdout.write(`${table.toString()}\n`);
  process.stdout.write(
    `shortest leak with strong_match from there on: ${shortest === undefined ? 'none' : `${shortest} s`} (target ≤ 200 s)\n`,
  );
  if (check)
    process.stdout.write(
      `checked for real (cut to ${shortest} s, re-encoded, analysed): ${check.classification}, ${check.right ? 'the right viewer' : 'NOT the right viewer'}, ${check.segments} segments\n`,
    );
  process.stdout.write(
    `as the leaker, each of ${spread.leakers} drawn viewers (this reading, signs set by their ids): shortest median ${spread.median} s, 90% ${spread.p90} s, 95% ${spread.p95} s, longest ${spread.max} s; ${spread.within200} within 200 s${spread.none ? `, ${spread.none} never strong within ${seconds} s` : ''}\n`,
  );
  process.stdout.write(
    `null trials: ${trials} (${half} wrong-content on the leak, ${trials - half} on the unmarked film): strong ${outcomes.strong_match}, weak ${outcomes.weak_match}, none ${outcomes.no_match}; smallest false-positive probability ${smallestFp.toExponential(1)}\n`,
  );
  process.stdout.write(`the unmarked film with the real key: ${unmarkedReal.classification}\n`);
  process.stdout.write(printNaming(naming, leakerCount));
}
