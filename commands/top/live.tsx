import { useApp, useInput, useStdin, useStdout } from 'ink';
import { useEffect, useState } from 'react';
import type { Overview } from '../../src/domain/operations/overview.js';
import { Dashboard } from './dashboard.js';
import type { OverviewSource } from './source.js';

export interface TopAppProps {
  source: OverviewSource;
  intervalMs: number;
}

/** The live dashboard: reads the source, draws, waits `intervalMs`, again; q, Esc or Ctrl-C quit. */
export function TopApp({ source, intervalMs }: TopAppProps) {
  const { exit } = useApp();
  const { isRawModeSupported } = useStdin();
  const columns = useColumns();
  const [overview, setOverview] = useState<Overview>();
  const [error, setError] = useState<string>();

  useEffect(() => {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    const refresh = async () => {
      try {
        const next = await source.read();
        if (stopped) return;
        setOverview(next);
        setError(undefined);
      } catch (err) {
        if (!stopped) setError((err as Error).message);
      }
      // The next read waits for this one: a slow database is never asked twice at once.
      if (!stopped) timer = setTimeout(() => void refresh(), intervalMs);
    };
    void refresh();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [source, intervalMs]);

  useInput(
    (input, key) => {
      if (input === 'q' || key.escape) exit();
    },
    { isActive: isRawModeSupported === true },
  );

  return (
    <Dashboard
      overview={overview}
      source={source.label}
      columns={columns}
      error={error}
      refreshSeconds={intervalMs / 1000}
    />
  );
}

/** Clears the (alternate) screen and puts the cursor home. */
const CLEAR_SCREEN = '\x1b[2J\x1b[H';

/**
 * The terminal's width, followed as it is resized. The screen is cleared first, before ink
 * redraws: a terminal rewraps the old frame's lines on a resize, and ink, which erases only the
 * lines it wrote, would leave their pieces above the new frame.
 */
function useColumns(): number {
  const { stdout } = useStdout();
  const [columns, setColumns] = useState(stdout.columns || 80);
  useEffect(() => {
    const onResize = () => {
      stdout.write(CLEAR_SCREEN);
      setColumns(stdout.columns || 80);
    };
    stdout.prependListener('resize', onResize);
    return () => {
      stdout.off('resize', onResize);
    };
  }, [stdout]);
  return columns;
}
