/**
 * A small structured logger writing JSON lines to stderr. Callers pass fields, never raw
 * headers or bodies, so that secrets (API keys, tokens, webhook secrets) stay out of logs.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 99 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** whether lines of this level are written (a caller skips building fields for nothing) */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean;
}

/**
 * `json` lines for log collectors, or `pretty` lines for a person at a terminal (the default when
 * stderr is one): time, level, message, then the fields as key=value.
 */
export type LogFormat = 'json' | 'pretty';

export function createLogger(level: LogLevel, writeTo?: (line: string) => void, formatAs?: LogFormat): Logger {
  const write = writeTo ?? ((l: string) => process.stderr.write(l));
  // A writer of the caller's (a test, a collector) gets JSON unless told otherwise.
  const format = formatAs ?? (!writeTo && process.stderr.isTTY ? 'pretty' : 'json');
  const min = ORDER[level];
  const emit = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < min) return;
    const t = new Date().toISOString();
    if (format === 'json') write(`${JSON.stringify({ t, level: lvl, msg, ...fields })}\n`);
    else write(`${t.slice(11, 23)} ${lvl.toUpperCase().padEnd(5)} ${msg}${prettyFields(fields)}\n`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    enabled: (lvl) => ORDER[lvl] >= min,
  };
}

/** What an error becomes in a log line: its name, message and stack, no request data. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) return { err: err.name, message: err.message, stack: err.stack };
  return { err: String(err) };
}

function prettyFields(fields: Record<string, unknown> | undefined): string {
  if (!fields) return '';
  const parts = Object.entries(fields).map(
    ([k, v]) => `${k}=${typeof v === 'string' && !/\s/.test(v) ? v : JSON.stringify(v)}`,
  );
  return parts.length ? ` ${parts.join(' ')}` : '';
}
