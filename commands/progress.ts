/**
 * A one-line progress display on stderr for long media work, redrawn in place; silent when
 * stderr is not a terminal (scripts, CI logs) or with --json, so output stays parseable.
 */
export interface Progress {
  update(label: string, done: number, total: number): void;
  done(): void;
}

export function createProgress(enabled = Boolean(process.stderr.isTTY)): Progress {
  let started = 0;
  let lastLabel = '';
  let lastDraw = 0;
  let drawn = false;
  return {
    update(label, done, total) {
      if (!enabled) return;
      const now = Date.now();
      if (label !== lastLabel) {
        lastLabel = label;
        started = now;
      }
      if (now - lastDraw < 100 && done < total) return;
      lastDraw = now;
      const share = total > 0 ? Math.min(1, done / total) : 0;
      const width = 24;
      const bar = '#'.repeat(Math.round(share * width)).padEnd(width, '.');
      const elapsed = (now - started) / 1000;
      const eta = share > 0.02 && share < 1 ? ` ETA ${formatSeconds((elapsed * (1 - share)) / share)}` : '';
      process.stderr.write(`\r\x1b[2K${label} [${bar}] ${done}/${total} (${Math.round(share * 100)}%)${eta}`);
      drawn = true;
    },
    done() {
      if (drawn) process.stderr.write('\r\x1b[2K');
      drawn = false;
    },
  };
}

function formatSeconds(s: number): string {
  if (s < 60) return `${Math.ceil(s)} s`;
  return `${Math.floor(s / 60)} min ${Math.ceil(s % 60)} s`;
}
