import Table from 'cli-table3';
import type { ChosenSplices } from './chosen.js';
import type { Shortest } from './shortest.js';
import { DECADES, type Tally } from './tally.js';

// bench:verdicts' tables, one set per population.

export interface VictimTally {
  trials: number;
  strong: number;
  /** strong matches that named anyone outside the coalition: the goal is 0 */
  innocentsNamed: number;
  victimNamed: number;
  /** leaks whose decided bits the victim's id fits */
  victimFits: number;
  /** viewers outside the coalition that a mixed copy implicated */
  implicated: number;
}

export interface PopulationResult {
  viewers: number;
  level: string;
  families: Record<string, Tally>;
  victims: { keyed: VictimTally; fixed: VictimTally };
  chosen: ChosenSplices[];
  shortest: Shortest;
}

const table = (head: string[]) => new Table({ head, style: { head: [], border: [] } });

function verdictTable(r: PopulationResult): string {
  const t = table([
    'leaks',
    'trials',
    'strong_match',
    'innocents named',
    'sources named',
    'weak_match',
    'mixed_copy',
    'implicated',
    'innocents implicated',
    'pairs named',
    'no_match',
  ]);
  for (const [family, f] of Object.entries(r.families))
    t.push([
      family,
      f.trials,
      f.strong,
      f.innocentsNamed,
      f.sourcesNamed,
      f.weak,
      f.mixed,
      f.implicated,
      f.innocentsImplicated,
      f.pairsNamed,
      f.none,
    ]);
  return t.toString();
}

function calibrationTable(r: PopulationResult): string {
  const t = table(['identification figure', 'leaks', 'an innocent fit every decided bit', 'rate']);
  for (let d = 0; d < DECADES; d++) {
    const sum = Object.values(r.families).reduce(
      (acc, f) => ({
        leaks: acc.leaks + (f.calibration[d]?.leaks ?? 0),
        innocent: acc.innocent + (f.calibration[d]?.innocent ?? 0),
      }),
      { leaks: 0, innocent: 0 },
    );
    const range = d === 0 ? '≥ 1e-1' : d === DECADES - 1 ? `< 1e-${d}` : `[1e-${d + 1}, 1e-${d})`;
    t.push([range, sum.leaks, sum.innocent, sum.leaks === 0 ? '-' : (sum.innocent / sum.leaks).toExponential(1)]);
  }
  return t.toString();
}

function victimTable(r: PopulationResult): string {
  const t = table([
    'rule of the films',
    'trials',
    'strong_match',
    'innocents named',
    'victim named',
    'victim fits',
    'innocents implicated',
  ]);
  const row = (v: VictimTally) => [v.trials, v.strong, v.innocentsNamed, v.victimNamed, v.victimFits, v.implicated];
  t.push(['keyed per film', ...row(r.victims.keyed)]);
  t.push(['one fixed rule', ...row(r.victims.fixed)]);
  return t.toString();
}

function chosenTable(r: PopulationResult): string {
  const t = table([
    'coalition',
    'splices tried',
    'an innocent fit (coalitions)',
    'the bound allows',
    'one alone fit',
    'that one innocent',
    'their figures summed',
    'p (Poisson)',
    'innocents named',
  ]);
  for (const [i, c] of r.chosen.entries())
    t.push([
      `${i + 2} viewers`,
      c.splices,
      `${c.innocentFits} (${c.coalitionsWithInnocents})`,
      c.allowedOverAll.toFixed(1),
      c.loneFits,
      c.loneInnocents,
      c.predicted.toFixed(2),
      c.pValue.toExponential(1),
      c.strongInnocents,
    ]);
  return t.toString();
}

/** A length in segments, and in time at `segmentSeconds` each. */
const inTime = (segments: number | undefined, segmentSeconds: number) => {
  if (segments === undefined) return 'none';
  const seconds = segments * segmentSeconds;
  return `${segments} (${seconds < 120 ? `${seconds} s` : `${(seconds / 60).toFixed(1)} min`})`;
};

function shortestLine(s: Shortest, segmentSeconds: number): string {
  return (
    `shortest leak with an honest strong_match (${s.leakers} leakers × 5 starts, ${segmentSeconds}-s segments): ` +
    `keyed rule median ${inTime(s.median, segmentSeconds)} segments, 95% ${inTime(s.p95, segmentSeconds)}, longest ` +
    `${inTime(s.max, segmentSeconds)}; fixed rule median ${s.fixed.median}, 95% ${s.fixed.p95}, longest ` +
    `${s.fixed.max}; checked with the real matcher (keyed): ${s.confirmed} of ${s.checked} strong at that length ` +
    'and not one shorter'
  );
}

export function printResults(results: readonly PopulationResult[], segmentSeconds: number): void {
  for (const r of results) {
    const out = [
      `\n${r.viewers.toLocaleString('en')} viewers (${r.level}): verdicts`,
      verdictTable(r),
      'the identification figure against the truth (all families): how often did an innocent fit?',
      calibrationTable(r),
      'colluders who know a victim’s pattern from another film, spliced to it (a victim who agrees with all three ' +
        'wherever they agree)',
      victimTable(r),
      'coalitions that try splices until one innocent alone fits: lone innocents against what the figure allows',
      chosenTable(r),
      shortestLine(r.shortest, segmentSeconds),
    ];
    process.stdout.write(`${out.join('\n')}\n`);
  }
}

/** --only shortest: one row per population, in segments and in time. */
export function printShortest(
  rows: readonly { viewers: number; level: string; shortest: Shortest }[],
  segmentSeconds: number,
): void {
  const t = table([
    'viewers',
    'median (keyed rule)',
    '95%',
    'longest',
    'fixed rule: median',
    'confirmed by the real matcher',
  ]);
  for (const { viewers, shortest: s } of rows)
    t.push([
      viewers.toLocaleString('en'),
      inTime(s.median, segmentSeconds),
      inTime(s.p95, segmentSeconds),
      inTime(s.max, segmentSeconds),
      inTime(s.fixed.median, segmentSeconds),
      `${s.confirmed} of ${s.checked}`,
    ]);
  const leakers = rows[0]?.shortest.leakers ?? 0;
  process.stdout.write(
    `the shortest leak with an honest strong_match, ${segmentSeconds}-s segments (${leakers} leakers × 5 starts)\n` +
      `${t.toString()}\n`,
  );
}
