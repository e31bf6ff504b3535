export interface Ticker {
  label(text: string): void;
  /** a line of its own above the ticking one */
  note(text: string): void;
  stop(): void;
}

/**
 * A terminal gets a line of what the analysis is doing (its stage, relabelled as it goes) and the
 * time elapsed, redrawn every second on stderr; nothing at all for scripts (no TTY) or with --json.
 */
export function createTicker(enabled: boolean, initial: string): Ticker {
  if (!enabled) return { label() {}, note: (t) => void process.stderr.write(`${t}\n`), stop() {} };
  const started = Date.now();
  let current = initial;
  let running = true;
  const draw = () => process.stderr.write(`\r\x1b[2K${current}… (elapsed ${Math.floor((Date.now() - started) / 1000)} s)`);
  const timer = setInterval(draw, 1000);
  timer.unref();
  draw();
  return {
    label(t) {
      current = t;
      if (running) draw();
    },
    note(t) {
      if (!running) return void process.stderr.write(`${t}\n`);
      process.stderr.write(`\r\x1b[2K${t}\n`);
      draw();
    },
    stop() {
      if (!running) return;
      running = false;
      clearInterval(timer);
      process.stderr.write('\r\x1b[2K');
    },
  };
}
