import type { DtcwtBackend, DtcwtBackendKind } from '../gpu/index.js';
import { formatApusd } from '../src/domain/billing/format.js';
import { badRequest } from '../src/errors.js';
import { segmentSecondsOption } from '../src/watermark/segment-rule.js';
import { type ContentType, ingestContent } from '../src/domain/ingest/ingest.js';
import { INGEST_UNITS, ingestedLine, ingestQueued, stagesLine } from './ingest-queued.js';
import { type DbOptions, typedOption } from './options.js';
import { printJson } from './output.js';
import { createProgress } from './progress.js';
import { withContext } from './with-context.js';

interface IngestOptions extends DbOptions {
  title: string;
  type: ContentType;
  watermark?: boolean;
  description?: string;
  crf?: string;
  preset?: string;
  segmentSeconds?: string;
  backend?: DtcwtBackendKind;
  org?: string;
  queue?: boolean;
  wait?: boolean;
}

/** `drm ingest <file>`: package a film or a track into the catalog, with a progress bar on a terminal. */
export function ingest(file: string, opts: IngestOptions): Promise<number> {
  return withContext(opts, async (ctx, out) => {
    const crf = opts.crf === undefined ? undefined : Number(opts.crf);
    if (crf !== undefined && !Number.isInteger(crf))
      throw badRequest(`--crf must be a whole number, got ${JSON.stringify(opts.crf)}`);
    const request = {
      input: file,
      title: opts.title,
      type: opts.type,
      watermark: Boolean(opts.watermark),
      description: opts.description,
      crf,
      preset: opts.preset,
      segmentSeconds: segmentSecondsOption(opts.segmentSeconds),
      organizationId: opts.org,
    };
    if (opts.wait && !opts.queue)
      throw badRequest('--wait goes with --queue (an ingest without --queue runs here and always waits)');
    if (opts.queue && typedOption(opts, 'backend'))
      throw badRequest(
        '--backend applies to an ingest run here; a queued one is marked with its ' +
          "worker's backend (drm worker --backend)",
      );
    if (opts.queue) return ingestQueued(ctx, out, request, Boolean(opts.wait));
    const progress = createProgress(!out.json && Boolean(process.stderr.isTTY));
    const controller = new AbortController();
    const stop = () => controller.abort();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    let backend: DtcwtBackend | undefined;
    // From the process's start: loading drm, opening the database and the store.
    const cliStart = { stage: 'cli-start', seconds: Math.round(performance.now()) / 1000 };
    try {
      const result = await ingestContent(ctx, request, {
        signal: controller.signal,
        backend: async () => {
          backend = await ctx.dtcwt(opts.backend);
          if (!out.json) out.error(`watermarking with DTCWT backend ${backend.name}`);
          return backend;
        },
        onProgress: (stage, done, total) =>
          progress.update(stage, Math.round(done), Math.round(total), INGEST_UNITS[stage]),
      });
      progress.finish('ingest done');
      result.stages.unshift(cliStart);
      if (out.json) printJson(out, result);
      else {
        out.write(ingestedLine(result));
        const stages = stagesLine(result);
        if (stages) out.write(stages);
        const charge = result.charge;
        if (charge) {
          const fee = charge.waivedByPass
            ? 'the watermark fee waived by its Watermark Pass'
            : `a watermark fee of ${formatApusd(charge.feeMicro)} APUSD`;
          out.write(`licensed to organization ${charge.organizationId}, ${fee}`);
        } else {
          out.write(
            `license it with: drm admin license --org <organizationId> ` +
              `--content ${result.contentId} ` +
              `--type ${result.type}${result.isWatermarked ? ' --watermark' : ''}`,
          );
        }
      }
      return 0;
    } catch (err) {
      progress.stop();
      if (controller.signal.aborted) {
        out.error('drm: ingest cancelled; nothing was published and its files are removed');
        return 130;
      }
      throw err;
    } finally {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      await backend?.close();
    }
  });
}
