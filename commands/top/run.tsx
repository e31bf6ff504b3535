import type { Command } from 'commander';
import { render, renderToString } from 'ink';
import { badRequest } from '../../src/errors.js';
import { outputFlags } from '../options.js';
import { createOutput, printJson, reportError } from '../output.js';
import { Dashboard } from './dashboard.js';
import { TopApp } from './live.js';
import { type OverviewSource, openSource, type TopSourceOptions } from './source.js';

export interface TopOptions extends TopSourceOptions {
  json?: boolean;
  once?: boolean;
  interval?: string;
}

/** The alternate screen: what was on the terminal before comes back on exit, as with top(1). */
const ENTER_ALTERNATE_SCREEN = '\x1b[?1049h\x1b[H';
const LEAVE_ALTERNATE_SCREEN = '\x1b[?1049l';

/**
 * drm top: the live view on a terminal; one snapshot (plain, or --json) when stdout is not a
 * terminal or with --once, so that scripts and pipes get figures rather than escape codes.
 */
export async function top(opts: TopOptions, command?: Command): Promise<number> {
  const out = createOutput(Boolean(opts.json), outputFlags(opts));
  let source: OverviewSource | undefined;
  try {
    const intervalMs = parseInterval(opts.interval);
    source = await openSource(opts, (option) => command?.getOptionValueSource(option) === 'cli');
    if (opts.json || opts.once || !process.stdout.isTTY) {
      const overview = await source.read();
      if (opts.json) printJson(out, overview);
      else {
        const columns = process.stdout.columns || Number(process.env.COLUMNS) || 100;
        out.write(
          renderToString(<Dashboard overview={overview} source={source.label} columns={columns} />, { columns }),
        );
      }
      return 0;
    }
    await runLive(source, intervalMs);
    return 0;
  } catch (err) {
    return reportError(out, err);
  } finally {
    await source?.close();
  }
}

function parseInterval(raw: string | undefined): number {
  if (raw === undefined) return 1000;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0.2 || seconds > 3600)
    throw badRequest(`--interval is seconds between refreshes, 0.2 to 3600; got ${JSON.stringify(raw)}`);
  return Math.round(seconds * 1000);
}

async function runLive(source: OverviewSource, intervalMs: number): Promise<void> {
  process.stdout.write(ENTER_ALTERNATE_SCREEN);
  const app = render(<TopApp source={source} intervalMs={intervalMs} />, { exitOnCtrlC: true, patchConsole: false });
  // Ctrl-C reaches ink as a key in raw mode; a signal (kill, or Ctrl-C without a terminal for stdin) ends it too.
  const stop = () => app.unmount();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  process.once('SIGHUP', stop);
  try {
    await app.waitUntilExit();
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    process.off('SIGHUP', stop);
    process.stdout.write(LEAVE_ALTERNATE_SCREEN);
  }
}
