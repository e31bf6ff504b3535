import fs from 'node:fs';
import path from 'node:path';
import { createDtcwtBackend, type DtcwtBackend, type DtcwtBackendKind } from '../gpu/index.js';
import { resolveConfig } from '../src/config.js';
import { loadServerSecret } from '../src/crypto/secret.js';
import { DrmError } from '../src/errors.js';
import { mediaBinaries } from '../src/media/binaries.js';
import { type BackendSource, kindOf, watermarkEngine } from '../src/watermark/engine.js';
import { watermarkKey } from '../src/watermark/keyed-random.js';
import {
  flippedAt,
  positionOf,
  ruleOfContent,
  type SegmentRule,
  segmentRuleKey,
  segmentSecondsOption,
  withSegmentSeconds,
} from '../src/watermark/segment-rule.js';
import { parseBits, type SegmentReading } from '../src/watermark/segments.js';
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
  /** which bit of an id each segment carries: the content's keyed rule (default), or the fixed one of older content */
  rule?: string;
  /** how long each segment is: what the content was (or will be) ingested with */
  segmentSeconds?: string;
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

/**
 * The secret of an existing deployment. A freshly made one would mark copies no server can read,
 * and detecting with it would read noise and look like "no mark": refuse instead, creating nothing.
 */
function existingKeys(opts: WatermarkOptions, contentId: string): { key: Buffer; rule: SegmentRule } {
  const kind = opts.rule ?? 'keyed';
  const segmentSeconds = segmentSecondsOption(opts.segmentSeconds);
  if (kind !== 'keyed' && kind !== 'fixed')
    throw new DrmError('BAD_REQUEST', `--rule must be keyed or fixed, got ${JSON.stringify(kind)}`);
  const dir = resolveConfig({ dataDir: opts.dataDir }).dataDir;
  if (!process.env.DRM_SECRET && !fs.existsSync(path.join(dir, 'secret.key'))) {
    throw new DrmError(
      'BAD_REQUEST',
      `no secret: set DRM_SECRET or point --data-dir at the data directory of the ` +
        `deployment that marks and reads copies (${dir} has no secret.key)`,
    );
  }
  const secret = loadServerSecret(dir);
  const rule = withSegmentSeconds(ruleOfContent(kind, segmentRuleKey(secret), contentId), segmentSeconds);
  return { key: watermarkKey(secret), rule };
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

/** The DTCWT backend, made when video asks for it (after the one line that names it) and closed by `close`. */
function lazyBackend(
  kind: DtcwtBackendKind | undefined,
  announce: (name: string) => void,
): { source: BackendSource; close: () => Promise<void> } {
  let made: DtcwtBackend | undefined;
  return {
    source: async () => {
      made = await createDtcwtBackend(kind ?? 'auto');
      announce(made.name);
      return made;
    },
    close: async () => made?.close(),
  };
}

export function embed(input: string, opts: WatermarkOptions & { bits: string; out: string }): Promise<number> {
  return run(opts.json, async (out) => {
    const bits = parseBits(opts.bits);
    const contentId = contentIdOf(opts);
    checkInput(input, 'input');
    if (path.resolve(opts.out) === path.resolve(input))
      throw new DrmError('BAD_REQUEST', '--out must not be the input file');
    const { key, rule } = existingKeys(opts, contentId);
    const bins = mediaBinaries();
    const kind = await kindOf(bins, input);
    const progress = createProgress(!out.json && Boolean(process.stderr.isTTY));
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    const backend = lazyBackend(opts.backend, (name) => {
      if (!out.json) out.error(`marking video with DTCWT backend ${name}`);
    });
    try {
      const copy = await watermarkEngine(kind).embed({
        bins,
        key,
        contentId,
        input,
        output: opts.out,
        bits,
        rule,
        backend: backend.source,
        signal: controller.signal,
        onProgress: (d, n) =>
          progress.update('embedding', Math.round(d), Math.round(n), kind === 'video' ? 'frames' : 's of media'),
      });
      progress.finish('embedding done');
      if (copy.kind === 'video') {
        const r = copy.result;
        if (out.json) printJson(out, { output: opts.out, kind: 'video', contentId, bits, backend: copy.backend, ...r });
        else
          out.write(
            `wrote ${opts.out}: ${r.frames} frames of ${r.width}x${r.height}, ${r.segments} ` +
              `segment(s) of ${rule.segmentSeconds} s marked for ${bits}`,
          );
      } else {
        const r = copy.result;
        if (out.json) printJson(out, { output: opts.out, kind: 'music', contentId, bits, ...r });
        else
          out.write(
            `wrote ${opts.out}: ${r.segments} segment(s) of ${rule.segmentSeconds} s marked ` +
              `for ${bits}, mark at ${r.snrDb.toFixed(1)} dB below the music`,
          );
      }
      return 0;
    } finally {
      progress.stop();
      process.off('SIGINT', stop);
      await backend.close();
    }
  });
}

/** A segment's reading in both terms: the variant it reads, and the value of the id's bit it carries under the rule. */
function readAs(s: SegmentReading, rule: SegmentRule) {
  const variant = s.bit === '0' ? 'A' : s.bit === '1' ? 'B' : '?';
  const flipped = flippedAt(rule, s.index);
  const bit = s.bit === '?' || !flipped ? s.bit : s.bit === '0' ? '1' : '0';
  return { index: s.index, z: s.z, variant, position: positionOf(rule, s.index), bit, coverage: s.coverage };
}

/** The progress line's words for each stage of detection. */
const DETECT_STAGES = {
  decode: 'decoding the leak',
  align: 'aligning',
  score: { video: 'scoring frames', music: 'scoring' },
} as const;

/** What each detection stage counts. */
const detectUnit = (stage: 'decode' | 'align' | 'score', kind: 'video' | 'music') =>
  stage === 'align' ? 'steps' : kind === 'video' || stage === 'decode' ? 'frames' : 's of media';

export function detect(leak: string, opts: WatermarkOptions & { original: string }): Promise<number> {
  return run(opts.json, async (out) => {
    const contentId = contentIdOf(opts);
    checkInput(leak, 'leak');
    checkInput(opts.original, 'original');
    const { key, rule } = existingKeys(opts, contentId);
    const bins = mediaBinaries();
    const kind = await kindOf(bins, opts.original);
    const progress = createProgress(!out.json && Boolean(process.stderr.isTTY));
    const backend = lazyBackend(opts.backend, () => {});
    const detection = await watermarkEngine(kind)
      .detect({
        bins,
        key,
        contentId,
        leak,
        original: opts.original,
        rule,
        backend: backend.source,
        onProgress: (stage, d, n) =>
          progress.update(
            stage === 'score' ? DETECT_STAGES.score[kind] : DETECT_STAGES[stage],
            Math.round(d),
            Math.round(n),
            detectUnit(stage, kind),
          ),
      })
      .catch((err) => {
        progress.stop();
        throw err;
      })
      .finally(() => backend.close());
    progress.finish('detection done');
    const round = (v: number) => Math.round(v * 100) / 100;
    const segments = detection.segments.map((s) => readAs(s, rule));
    if (out.json) {
      printJson(out, {
        rule: rule.kind,
        segmentSeconds: rule.segmentSeconds,
        segments: segments.map((s) => ({ ...s, z: round(s.z), coverage: round(s.coverage) })),
        bits: detection.bits,
        alignment: detection.alignment,
      });
      return 0;
    }
    printTable(
      out,
      ['segment', 'starts at', 'leak covers', 'z', 'variant', 'id bit', 'reads'],
      segments.map((s) => [
        s.index,
        `${s.index * rule.segmentSeconds} s`,
        `${s.coverage.toFixed(1)} s`,
        s.z.toFixed(1),
        s.variant,
        s.position,
        s.bit,
      ]),
    );
    const older = rule.kind === 'keyed' ? '; --rule fixed for content ingested before' : '';
    out.write(`bits: ${detection.bits} (rule ${rule.kind}${older})`);
    const decided = detection.segments.filter((s) => s.bit !== '?').length;
    out.write(
      `${decided} of ${detection.segments.length} segment(s) decided (|z| ≥ 4); ` +
        `alignment ${JSON.stringify(detection.alignment)}`,
    );
    return 0;
  });
}
