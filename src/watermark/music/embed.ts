import fs from 'node:fs';
import path from 'node:path';
import { DrmError } from '../../errors.js';
import { fixedRecords } from '../../media/records.js';
import { lastLine, type MediaProcess } from '../../media/spawn.js';
import { type EmbedJob, parseBits, variantFor } from '../segments.js';
import {
  audioOf,
  decodeInterleaved,
  deinterleave,
  type FedProcess,
  finishDecoder,
  interleave,
  startFed,
  stop,
} from './pipe.js';
import { addScaled, energy, musicSegmentDelta } from './segment.js';

/**
 * Marking a whole audio file for one viewer's bits. It streams through ffmpeg pipes a 10-s
 * segment at a time, so a long file is never held whole.
 */

const OUTPUT_BITRATE = '256k';

/** `output` is an .m4a (AAC, 256 kb/s, the original sample rate and channel count). */
export interface MusicEmbedOptions extends EmbedJob {
  onProgress?: (doneSeconds: number, totalSeconds: number) => void;
}

export async function embedMusic(
  o: MusicEmbedOptions,
): Promise<{ segments: number; sampleRate: number; snrDb: number }> {
  const bits = parseBits(o.bits);
  if (path.resolve(o.input) === path.resolve(o.output))
    throw new DrmError('BAD_REQUEST', 'the output must be a different file from the input');
  const { info, sampleRate, channels } = await audioOf(o.bins, o.input, 'input');
  const decoder = decodeInterleaved(o.bins, o.input, { sampleRate, channels }, o.signal);
  const encoder = startFed(
    o.bins.ffmpeg,
    [
      '-v',
      'error',
      '-y',
      '-f',
      'f32le',
      '-ar',
      String(sampleRate),
      '-ac',
      String(channels),
      '-i',
      'pipe:0',
      '-c:a',
      'aac',
      '-b:a',
      OUTPUT_BITRATE,
      '-f',
      'ipod',
      o.output,
    ],
    o.signal,
  );
  try {
    const marked = await markStream(o, bits, decoder, encoder, { sampleRate, channels, totalSeconds: info.duration });
    await finishDecoder(decoder, o.input, o.signal);
    encoder.child.stdin.end();
    const end = await encoder.done;
    o.signal?.throwIfAborted();
    if (end.code !== 0) throw new DrmError('BAD_REQUEST', `could not write ${o.output}: ${lastLine(end.stderr)}`);
    // Silence carries no mark: nothing was added, so no finite ratio.
    const snrDb = marked.mark > 0 ? 10 * Math.log10(marked.signal / marked.mark) : Number.POSITIVE_INFINITY;
    return { segments: marked.segments, sampleRate, snrDb };
  } catch (err) {
    await stop(decoder, encoder);
    fs.rmSync(o.output, { force: true });
    // A cancelled run can also surface as a broken pipe or a cut-short decode: say it was cancelled.
    o.signal?.throwIfAborted();
    throw err;
  }
}

interface StreamShape {
  sampleRate: number;
  channels: number;
  totalSeconds: number;
}

/**
 * Decoder stdout → segments (of the rule's length) → marked samples → encoder stdin. Reading pauses while a write
 * waits for the encoder, so only one segment (in a few working copies) and a pipe's worth of
 * samples are ever in memory.
 */
async function markStream(
  o: MusicEmbedOptions,
  bits: string,
  decoder: MediaProcess,
  encoder: FedProcess,
  shape: StreamShape,
): Promise<{ segments: number; signal: number; mark: number }> {
  const seconds = o.rule.segmentSeconds;
  const segmentBytes = seconds * shape.sampleRate * shape.channels * 4;
  let segment = 0;
  const totals = { signal: 0, mark: 0 };
  for await (const bytes of fixedRecords(decoder.child.stdout as AsyncIterable<Buffer>, segmentBytes)) {
    o.signal?.throwIfAborted();
    const whole = bytes.length - (bytes.length % (4 * shape.channels));
    if (whole === 0) break;
    const samples = new Float32Array(bytes.buffer, bytes.byteOffset, whole / 4);
    await writeSamples(encoder, markSegment(samples, shape, o, bits, segment, totals), o.output);
    segment++;
    const done = segment * seconds;
    o.onProgress?.(Math.min(done, shape.totalSeconds || done), shape.totalSeconds || done);
  }
  o.signal?.throwIfAborted();
  return { segments: segment, ...totals };
}

function markSegment(
  samples: Float32Array,
  shape: StreamShape,
  o: MusicEmbedOptions,
  bits: string,
  segment: number,
  totals: { signal: number; mark: number },
): Float32Array {
  const planes = deinterleave(samples, shape.channels);
  const delta = musicSegmentDelta(planes, shape.sampleRate, o.key, o.contentId, segment);
  const sign = variantFor(bits, segment, o.rule) === 'A' ? 1 : -1;
  totals.signal += planes.reduce((s, c) => s + energy(c), 0);
  totals.mark += shape.channels * energy(delta);
  return interleave(planes.map((c) => addScaled(c, delta, sign)));
}

async function writeSamples(encoder: FedProcess, samples: Float32Array, output: string): Promise<void> {
  try {
    await encoder.write(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength));
  } catch {
    const end = await encoder.done;
    throw new DrmError('BAD_REQUEST', `could not write ${output}: ${lastLine(end.stderr)}`);
  }
}
