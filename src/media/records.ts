import { DrmError } from '../errors.js';
import { lastLine, startMedia } from './spawn.js';

/** A time range of the input, in seconds; both optional. */
export interface Range {
  start?: number;
  duration?: number;
}

export const rangeArgs = (r: Range) => [
  ...(r.start !== undefined ? ['-ss', String(r.start)] : []),
  ...(r.duration !== undefined ? ['-t', String(r.duration)] : []),
];

/** Where each record is written: memory of `size` bytes that the consumer then owns. */
export type RecordMemory = () => Uint8Array;

/**
 * Cuts a byte stream into fixed-size records, each its own buffer (a consumer may keep or transfer
 * it; `memory` hands them out, new ones by default); a last short record is yielded as it is. The
 * consumer pulls, so the producer is held back by its pipe: never more than a record or two ahead.
 */
export async function* fixedRecords(
  stream: AsyncIterable<Buffer>,
  size: number,
  memory: RecordMemory = () => new Uint8Array(size),
): AsyncGenerator<Uint8Array> {
  let pending = memory();
  let filled = 0;
  for await (const chunk of stream) {
    let offset = 0;
    while (offset < chunk.length) {
      const take = Math.min(size - filled, chunk.length - offset);
      pending.set(chunk.subarray(offset, offset + take), filled);
      filled += take;
      offset += take;
      if (filled === size) {
        yield pending;
        pending = memory();
        filled = 0;
      }
    }
  }
  if (filled > 0) yield pending.subarray(0, filled);
}

/**
 * Fixed-size records from a process's stdout (fixedRecords): a whole film never sits in memory.
 * A decoder that fails is an error naming `what`; one the consumer leaves early is killed.
 */
export async function* records(
  bin: string,
  args: string[],
  size: number,
  what: string,
  signal?: AbortSignal,
  memory?: RecordMemory,
): AsyncGenerator<Uint8Array> {
  const p = startMedia(bin, args, signal);
  let finished = false;
  try {
    let last: Uint8Array | undefined;
    // Hold back the last record until the exit code says the stream was whole.
    for await (const record of fixedRecords(p.child.stdout as AsyncIterable<Buffer>, size, memory)) {
      if (record.length < size) last = record;
      else yield record;
    }
    const { code, signal: killed, stderr } = await p.done;
    finished = true;
    if (killed === null && code !== 0)
      throw new DrmError('BAD_REQUEST', `could not decode ${what}: ${lastLine(stderr)}`);
    if (last) yield last;
  } finally {
    // The consumer stopped early (break, error): stop ffmpeg instead of leaving it blocked on the pipe.
    if (!finished) {
      p.child.kill('SIGKILL');
      await p.done.catch(() => undefined);
    }
  }
}
