import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/serve-process.js';
import { bufferedLines } from '../../src/log.js';

// The server's log lines reach stderr together, a few milliseconds late, not one system call per line.

const HELD_MS = 5;
const later = () => new Promise((resolve) => setTimeout(resolve, HELD_MS + 5));

describe('log lines written together', () => {
  it('writes the lines of a few milliseconds together, in order', async () => {
    const writes: string[] = [];
    const out = bufferedLines((chunk) => writes.push(chunk), 64 * 1024, HELD_MS);
    out.line('a\n');
    out.line('b\n');
    expect(writes).toEqual([]);
    await later();
    expect(writes).toEqual(['a\nb\n']);
    out.line('c\n');
    await later();
    expect(writes).toEqual(['a\nb\n', 'c\n']);
  });

  it('writes an urgent line (a warning, an error) at once, after the lines before it', () => {
    const writes: string[] = [];
    const out = bufferedLines((chunk) => writes.push(chunk));
    out.line('info\n');
    out.line('warn\n', true);
    expect(writes).toEqual(['info\nwarn\n']);
  });

  it('writes at once when the lines pending reach the bound', () => {
    const writes: string[] = [];
    const out = bufferedLines((chunk) => writes.push(chunk), 10);
    out.line('12345\n');
    expect(writes).toEqual([]);
    out.line('67890\n');
    expect(writes).toEqual(['12345\n67890\n']);
  });

  it('writes what is pending when the process exits in the same turn', () => {
    const program = [
      "import { createLogger } from './src/log.ts';",
      "createLogger('info').info('last words', { n: 1 });",
      'process.exit(3);',
    ].join('\n');
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', program], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(run.status).toBe(3);
    expect(JSON.parse(run.stderr)).toMatchObject({ level: 'info', msg: 'last words', n: 1 });
  });

  it('leaves no exit listener behind once the lines are written', async () => {
    const before = process.listenerCount('exit');
    const out = bufferedLines(() => {}, 64 * 1024, HELD_MS);
    out.line('a\n');
    expect(process.listenerCount('exit')).toBe(before + 1);
    await later();
    expect(process.listenerCount('exit')).toBe(before);
  });
});
