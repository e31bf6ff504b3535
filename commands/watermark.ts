import fs from 'node:fs';
import path from 'node:path';
import { createDtcwtBackend, type DtcwtBackendKind } from '../gpu/index.js';
import { loadServerSecret } from '../src/crypto/secret.js';
import { DrmError } from '../src/errors.js';
import { mediaBinaries } from '../src/media/binaries.js';
import { probeMedia } from '../src/media/probe.js';
import { watermarkKey } from '../src/watermark/keyed-random.js';
import { type Detection, parseBits, SEGMENT_SECONDS } from '../src/watermark/segments.js';
import { createOutput, type Output, printJson, printTable, reportError } from './output.js';
import { createProgress } from './progress.js';

/**
 * `drm watermark embed|detect`: the watermark engine on a content team's own files, without a
 * server or a database. The secret is the server's (DRM_SECRET or <data-dir>/secret.key), so a
 * copy marked here reads the same as one streamed by `drm serve` on that data directory.
 */
interface WatermarkOptions {
  dataDir?: string;
  contentId?: string;
  backend?: DtcwtBackendKind;
  json?: boolean;
}

/** Content teams checking their own material need no id; ingested content has a UUID. */
export const LOCAL_CONTENT_ID = '00000000-0000-0000-0000-000000000000';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function contentIdOf(opts: WatermarkOptions): string {
  const id = opts.contentId ?? LOCAL_CONTENT_ID;
  if (!UUID.test(id)) throw new DrmError('BAD_REQUEST', `--content-id must be a UUID, got ${JSON.stringify(id)}`);
  return id.toLowerCase();
}

function dataDirOf(opts: WatermarkOptions): string {
  return path.resolve(opts.dataDir ?? process.env.DRM_DATA_DIR ?? './drm-data');
}

/**
 * The secret of an existing deployment. A freshly made one would mark copies no server can read,
 * and detecting with it would read noise and look like "no mark": refuse instead, creating nothing.
 */
function existingKey(opts: WatermarkOptions): Buffer {
  const dir = dataDirOf(opts);
  if (!process.env.DRM_SECRET && !fs.existsSync(path.join(dir, 'secret.key'))) {
    throw new DrmError('BAD_REQUEST', `no secret: set DRM_SECRET or point --data-dir at the data directory of the deployment that marks and reads copies (${dir} has no secret.key)`);
  }
  return watermarkKey(loadServerSecret(dir));
}

function checkInput(file: string, role: string): void {
  if (!fs.existsSync(file)) throw new DrmError('BAD_REQUEST', `${role} ${file} does not exist`);
  if (!fs.statSync(file).isFile()) throw new DrmError('BAD_REQUEST', `${role} ${file} is not a file`);
}

async function run(json: boolean | undefined, body: (out: Output) => Promise<number>): Promise<number> {
  const out = createOutput(Boolean(json));
  try {
    return await body(out);
  } catch (err) {
    return reportError(out, err);
  }
}

export function embed(input: string, opts: WatermarkOptions & { bits: string; out: string }): Promise<number> {
  return run(opts.json, async (out) => {
    const bits = parseBits(opts.bits);
    const contentId = contentIdOf(opts);
    checkInput(input, 'input');
    if (path.resolve(opts.out) === path.resolve(input)) throw new DrmError('BAD_REQUEST', '--out must not be the input file');
    const key = existingKey(opts);
    const bins = mediaBinaries();
    const info = await probeMedia(bins, input);
    const progress = createProgress(!out.json && Boolean(process.stderr.isTTY));
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    try {
      if (info.video) {
        const backend = await createDtcwtBackend(opts.backend ?? 'auto');
        try {
          if (!out.json) out.error(`marking video with DTCWT backend ${backend.name}`);
          const r = await (await import('../src/watermark/video-embed.js')).embedVideo({
            bins, key, contentId, input, output: opts.out, bits, backend, signal: controller.signal,
            onProgress: (d, n) => progress.update('embedding', d, n),
          });
          progress.done();
          if (out.json) printJson(out, { output: opts.out, kind: 'video', contentId, bits, backend: backend.name, ...r });
          else out.write(`wrote ${opts.out}: ${r.frames} frames of ${r.width}x${r.height}, ${r.segments} segment(s) of ${SEGMENT_SECONDS} s marked for ${bits}`);
        } finally {
          await backend.close();
        }
      } else {
        const r = await (await import('../src/watermark/music-pipeline.js')).embedMusic({
          bins, key, contentId, input, output: opts.out, bits, signal: controller.signal,
          onProgress: (d, n) => progress.update('embedding', Math.round(d), Math.round(n)),
        });
        progress.done();
        if (out.json) printJson(out, { output: opts.out, kind: 'music', contentId, bits, ...r });
        else out.write(`wrote ${opts.out}: ${r.segments} segment(s) of ${SEGMENT_SECONDS} s marked for ${bits}, mark at ${r.snrDb.toFixed(1)} dB below the music`);
      }
      return 0;
    } finally {
      progress.done();
      process.off('SIGINT', stop);
    }
  });
}

export function detect(leak: string, opts: WatermarkOptions & { original: string }): Promise<number> {
  return run(opts.json, async (out) => {
    const contentId = contentIdOf(opts);
    checkInput(leak, 'leak');
    checkInput(opts.original, 'original');
    const key = existingKey(opts);
    const bins = mediaBinaries();
    const info = await probeMedia(bins, opts.original);
    const progress = createProgress(!out.json && Boolean(process.stderr.isTTY));
    let detection: Detection;
    try {
      if (info.video) {
        const backend = await createDtcwtBackend(opts.backend ?? 'auto');
        try {
          detection = await (await import('../src/watermark/video-detect.js')).detectVideo({
            bins, key, contentId, leak, original: opts.original, backend,
            onProgress: (stage, d, n) => progress.update(stage === 'decode' ? 'decoding the leak' : stage === 'align' ? 'aligning' : 'scoring frames', d, n),
          });
        } finally {
          await backend.close();
        }
      } else {
        detection = await (await import('../src/watermark/music-pipeline.js')).detectMusic({
          bins, key, contentId, leak, original: opts.original,
          onProgress: (d, n) => progress.update('scoring', Math.round(d), Math.round(n)),
        });
      }
    } finally {
      progress.done();
    }
    const round = (v: number) => Math.round(v * 100) / 100;
    if (out.json) {
      printJson(out, {
        segments: detection.segments.map((s) => ({ index: s.index, z: round(s.z), bit: s.bit, coverage: round(s.coverage) })),
        bits: detection.bits,
        alignment: detection.alignment,
      });
      return 0;
    }
    printTable(
      out,
      ['segment', 'starts at', 'leak covers', 'z', 'bit'],
      detection.segments.map((s) => [s.index, `${s.index * SEGMENT_SECONDS} s`, `${s.coverage.toFixed(1)} s`, s.z.toFixed(1), s.bit]),
    );
    out.write(`bits: ${detection.bits}`);
    const decided = detection.segments.filter((s) => s.bit !== '?').length;
    out.write(`${decided} of ${detection.segments.length} segment(s) decided (|z| ≥ 4); alignment ${JSON.stringify(detection.alignment)}`);
    return 0;
  });
}
