import Table from 'cli-table3';
import type { IngestStage } from '../../src/domain/ingest/stage-times.js';
import { median } from '../stats.js';

/** One line of a stage table: a stage's median wall seconds, or a part of packaging's median CPU seconds. */
export interface StageRow {
  stage: string;
  part?: string;
  seconds?: number;
  cpuSeconds?: number;
}

/**
 * The medians, over runs, of each stage that `ingestContent` reported (and of each part of
 * packaging's CPU), in the order the stages ran. A stage or part a run lacked counts as 0 there.
 */
export function medianStages(runs: readonly IngestStage[][]): StageRow[] {
  const rows: StageRow[] = [];
  const stageNames = [...new Set(runs.flatMap((r) => r.map((s) => s.stage)))];
  for (const stage of stageNames) {
    const of = (r: IngestStage[]) => r.find((s) => s.stage === stage);
    rows.push({ stage, seconds: median(runs.map((r) => of(r)?.seconds ?? 0)) });
    const parts = [...new Set(runs.flatMap((r) => (of(r)?.parts ?? []).map((p) => p.part)))];
    for (const part of parts) {
      const cpu = runs.map((r) => of(r)?.parts?.find((p) => p.part === part)?.cpuSeconds ?? 0);
      rows.push({ stage, part, cpuSeconds: median(cpu) });
    }
  }
  return rows;
}

export function stageTable(title: string, rows: readonly StageRow[]): string {
  const table = new Table({ head: [title, 'wall s', 'CPU s'], style: { head: [], border: [] } });
  for (const r of rows)
    table.push([r.part ? `  ${r.part}` : r.stage, r.seconds?.toFixed(2) ?? '', r.cpuSeconds?.toFixed(2) ?? '']);
  const cpu = rows.reduce((sum, r) => sum + (r.cpuSeconds ?? 0), 0);
  table.push(['  packaging CPU in all', '', cpu.toFixed(2)]);
  return table.toString();
}
