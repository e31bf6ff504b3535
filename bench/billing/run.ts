// Metering's cost: `npm run bench:billing -- [--baseline REV] [--runs 3] [--sessions 1500] [--players 20] [--duration 5] [--targets sqlite,postgres] [--reads 10000,100000,1000000] [--reads-only] [--json]`.
//
// Two `drm serve` processes in the same run, each on its own fresh database with the same clip:
// one from this checkout (metering on: every session records its price, the period closer runs,
// billing reads are served), one from the commit before billing (--baseline, default cb89ca1),
// checked out beside it as a git worktree that shares node_modules (../serve/side-by-side.ts, shared
// with bench:serve --baseline). Interleaved runs of (1) sessions/s: --sessions first-time viewers
// through POST /stream at 10 at a time,
// (2) segment MB/s: --players sessions each fetching its own segments over keep-alive for
// --duration s, and (3) GET /api/v1/auth/verify requests/s (bench:api's endpoint) for as long. Medians, and metered / baseline. Then, on this checkout alone, what the billing
// reads (the upcoming invoice, usage) and the close cost as a month's sessions grow, beside the
// month's scan they replaced, and what the usage counters add to writes (--reads-only: those
// alone, without the baseline). Prints numbers; it fails on nothing.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { killAll, ROOT } from '../../test/helpers/serve-process.js';
import { baselineTree } from '../baseline.js';
import {
  type Databases,
  onTargets,
  removeTree,
  type SideBySide,
  type Sides,
  sideBySide,
  sideBySideTable,
} from '../serve/side-by-side.js';
import { billingReads } from './reads.js';
import { countersTables } from './tables.js';
import { writeCost } from './writes.js';

const { values } = parseArgs({
  options: {
    baseline: { type: 'string', default: 'cb89ca1' },
    runs: { type: 'string', default: '3' },
    sessions: { type: 'string', default: '1500' },
    players: { type: 'string', default: '20' },
    duration: { type: 'string', default: '5' },
    targets: { type: 'string', default: 'sqlite,postgres' },
    reads: { type: 'string', default: '10000,100000,1000000' },
    'reads-only': { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const runs = Math.max(1, Number(values.runs));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-bench-billing-'));
const log = (m: string) => process.stderr.write(`bench: ${m}\n`);

/** What the billing reads and the close cost as a month's sessions grow, on this checkout alone. */
async function reads(target: string, db: Databases) {
  log(`${target}: what the upcoming invoice, usage and the close cost as a month's sessions grow`);
  return billingReads(
    await db('reads'),
    path.join(work, `reads-${target}`),
    (values.reads as string).split(',').map(Number),
    Math.max(7, runs),
  );
}

/** What the usage counters' triggers add to a session's insert and a segment's byte count. */
async function writes(target: string, db: Databases) {
  log(`${target}: what the usage counters add to writes`);
  return writeCost(await db('writes'), path.join(work, `writes-${target}`));
}

async function compare(target: string, db: Databases, baseline: string) {
  const none = { ours: Number.NaN, baseline: Number.NaN, ratio: Number.NaN };
  const sides: SideBySide = values['reads-only']
    ? { sessions: none, segments: none, segmentsPerCpu: none, verify: none }
    : await sideBySide(target, db, {
        work,
        baseline,
        runs,
        sessions: Number(values.sessions),
        players: Number(values.players),
        duration: Number(values.duration),
        log,
        label: 'metered',
      });
  return { target, ...sides, reads: await reads(target, db), writes: await writes(target, db) };
}

const results: Awaited<ReturnType<typeof compare>>[] = [];
try {
  const baseline = values['reads-only']
    ? ''
    : baselineTree(ROOT, values.baseline as string, path.join(work, 'baseline')).dir;
  results.push(...(await onTargets((values.targets as string).split(','), (t, db) => compare(t, db, baseline))));
} finally {
  killAll();
  removeTree(path.join(work, 'baseline'));
  fs.rmSync(work, { recursive: true, force: true });
}

// the JSON keeps its names: this checkout's side is `metered`
const metered = ({ ours, baseline, ratio }: Sides) => ({ metered: ours, baseline, ratio });
const named = results.map((r) => ({
  ...r,
  sessions: metered(r.sessions),
  segments: metered(r.segments),
  segmentsPerCpu: metered(r.segmentsPerCpu),
  verify: metered(r.verify),
}));
if (values.json) process.stdout.write(`${JSON.stringify(named, null, 2)}\n`);
else {
  if (!values['reads-only'])
    process.stdout.write(
      `metering on (this checkout) against ${values.baseline} (before billing), medians of ${runs} interleaved runs, ${os.availableParallelism()} CPUs\n${sideBySideTable(results, { ours: 'metered', baseline: 'baseline', target: 90 })}`,
    );
  process.stdout.write(countersTables(results, Math.max(7, runs)));
}
