import os from 'node:os';
import Table from 'cli-table3';
import type { ReadCost } from './reads.js';
import type { WriteCost } from './writes.js';

/** The usage counters' tables of bench:billing: the reads and the close as a month grows, and what the counters add to writes. */
export function countersTables(
  results: { target: string; reads: ReadCost[]; writes: WriteCost }[],
  runs: number,
): string {
  const head = [
    "one organization's sessions this month",
    'GET /billing/invoices/upcoming ms',
    'GET /billing/usage ms',
    'the month scanned as before ms',
    'close of the month ms',
    'seeding s',
  ];
  const u = new Table({ head: ['database', ...head], style: { head: [], border: [] } });
  for (const r of results) {
    for (const x of r.reads) {
      const ms = [x.upcomingMs, x.usageMs, x.scanMs, x.closeMs].map((v) => v.toFixed(1));
      u.push([r.target, x.sessions.toLocaleString('en-US'), ...ms, x.seedS.toFixed(0)]);
    }
  }
  const w = new Table({
    head: ['database', 'µs per write, 8 in flight (medians of 3)', 'with the counters', 'without'],
    style: { head: [], border: [] },
  });
  for (const r of results) {
    w.push([r.target, 'new session', r.writes.insertUs.toFixed(0), r.writes.insertBareUs.toFixed(0)]);
    w.push([r.target, "a segment's bytes counted", r.writes.addBytesUs.toFixed(0), r.writes.addBytesBareUs.toFixed(0)]);
  }
  return `reads: medians of ${runs} runs, the close of 3, ${os.availableParallelism()} CPUs\n${u.toString()}\n${w.toString()}\n`;
}
