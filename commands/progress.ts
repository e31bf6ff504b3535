/**
 * The one progress display of the CLI (ingest, watermark embed and detect, analyze, uploads):
 * one line on stderr redrawn in place, `stage [bar] percent done/total unit · elapsed · ETA`,
 * and a last line with the total time. Silent when stderr is not a terminal (scripts, CI logs)
 * or with --json, so that output stays parseable.
 */
export interface Progress {
  /** A stage with counts; `unit` names them (segments, frames, "s of media", MB). */
  update(stage: string, done: number, total: number, unit?: string): void;
  /** A stage whose end is not known: its name and the time elapsed, redrawn every second. */
  stage(label: string): void;
  /** A line of its own above the progress line. */
  note(text: string): void;
  /** The last line: what was done and the total time ("ingested … in 1 min 12 s"). */
  finish(summary: string): void;
  /** Clears the line without a summary (an error follows). */
  stop(): void;
}

interface State {
  stage: string;
  stageStarted: number;
  done?: number;
  total?: number;
  unit?: string;
}

const BAR_CELLS = 24;

export function createProgress(
  enabled = Boolean(process.stderr.isTTY),
  stream: NodeJS.WritableStream = process.stderr,
  now = () => Date.now(),
): Progress {
  const started = now();
  let state: State | undefined;
  let drawn = false;
  let lastDraw = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  const draw = () => {
    if (!state) return;
    lastDraw = now();
    stream.write(`\r\x1b[2K${progressLine(state, lastDraw)}`);
    drawn = true;
  };
  const clear = () => {
    if (drawn) stream.write('\r\x1b[2K');
    drawn = false;
  };
  // Elapsed time moves on while a long stage reports nothing.
  const tick = () => {
    if (!timer && enabled) {
      timer = setInterval(draw, 1000);
      timer.unref();
    }
  };
  const end = () => {
    clearInterval(timer);
    timer = undefined;
    clear();
    state = undefined;
  };
  return {
    update(stage, done, total, unit) {
      if (!enabled) return;
      const t = now();
      if (state?.stage !== stage) state = { stage, stageStarted: t };
      Object.assign(state, { done, total, unit });
      tick();
      if (t - lastDraw >= 100 || done >= total) draw();
    },
    stage(label) {
      if (!enabled) return;
      state = { stage: label, stageStarted: now() };
      tick();
      draw();
    },
    note(text) {
      if (!enabled) return void stream.write(`${text}\n`);
      clear();
      stream.write(`${text}\n`);
      draw();
    },
    finish(summary) {
      if (!enabled) return;
      end();
      stream.write(`${summary} in ${formatDuration(now() - started)}\n`);
    },
    stop: end,
  };
}

/** The progress line of a state at a time (exported for its test). */
export function progressLine(s: State, at: number): string {
  const elapsedMs = at - s.stageStarted;
  const parts = [s.stage];
  if (s.total !== undefined && s.total > 0 && s.done !== undefined) {
    const share = Math.max(0, Math.min(1, s.done / s.total));
    parts.push(`[${'#'.repeat(Math.round(share * BAR_CELLS)).padEnd(BAR_CELLS, '.')}]`, `${Math.floor(share * 100)}%`);
    parts.push(`${formatCount(s.done)}/${formatCount(s.total)}${s.unit ? ` ${s.unit}` : ''}`);
    parts.push(`${formatDuration(elapsedMs)} elapsed`);
    if (share > 0.02 && share < 1) parts.push(`ETA ${formatDuration((elapsedMs * (1 - share)) / share)}`);
  } else {
    parts.push(`(${formatDuration(elapsedMs)} elapsed)`);
  }
  return parts.join('  ');
}

const formatCount = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(1));

/** "0.4 s", "12 s", "3 min 05 s", "1 h 02 min". */
export function formatDuration(ms: number): string {
  const s = Math.max(0, ms) / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const whole = Math.round(s);
  if (whole < 3600) return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, '0')} s`;
  return `${Math.floor(whole / 3600)} h ${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')} min`;
}
