import path from 'node:path';
import type { Context } from '../src/context.js';
import { analyzeLocalLeak } from '../src/domain/forensics/submit.js';
import type { Logger } from '../src/log.js';
import { analysisBody } from '../src/present/forensics.js';
import { evidenceReport } from '../src/report/evidence-report.js';
import { ANALYZE_USAGE_EXIT, type AnalyzeOptions } from './options.js';
import { CANCELLED, EXIT, FAILED, type Json, printAnalysis, stageOf } from './analysis-report.js';
import { analyzeOnServer, checkLeak } from './analyze-server.js';
import { checkReportPath, writeReportFile } from './report-file.js';
import { createProgress } from './progress.js';
import { createOutput, type Output, reportError } from './output.js';
import { withContext } from './with-context.js';

/**
 * `drm analyze <leak>`: trace a leaked copy to the viewer who received it, through the same core
 * as POST /api/v1/forensics/analyze. Locally (the default) the case is opened and run in this
 * process on the data directory's database; with --server and --api-key the leak is uploaded to
 * a running `drm serve`. The exit code is the finding, for scripts: 0 strong match, 2 weak
 * match, 4 mixed copy, 3 no match, 1 any error (a failed case included), 64 a usage error or
 * refused input (ANALYZE_USAGE_EXIT), 130 cancelled.
 */
export async function analyze(leak: string, opts: AnalyzeOptions): Promise<number> {
  if (opts.server !== undefined || opts.apiKey !== undefined) {
    const out = createOutput(Boolean(opts.json));
    try {
      return await analyzeOnServer(leak, opts, out);
    } catch (err) {
      return failWith(out, err);
    }
  }
  let decided = false;
  const code = await withContext(opts, async (ctx, out) => {
    try {
      const result = await analyzeLocally(ctx, out, leak, opts);
      decided = true;
      return result;
    } catch (err) {
      return failWith(out, err);
    }
  });
  // withContext reports its own errors (a bad --db) as 2 for BAD_REQUEST: here 2 is a weak match.
  return code === EXIT.weak_match && !decided ? ANALYZE_USAGE_EXIT : code;
}

/**
 * One line on stderr, like every drm error; refused input exits 64 and the rest 1, since 2, 3 and 4 are findings here.
 */
function failWith(out: Output, err: unknown): number {
  return reportError(out, err) === 2 ? ANALYZE_USAGE_EXIT : FAILED;
}

// ---------------------------------------------------------------------------------------------
// Local: the data directory's database, the case run in this process.

/**
 * The analysis logs a failed case with its error; here the case's reason is printed instead, so its
 * warnings wait and are shown only where that reason is the terse one of an internal error.
 */
function holdWarnings(log: Logger): { log: Logger; show: () => void } {
  const held: Array<() => void> = [];
  const hold =
    (write: Logger['error']): Logger['error'] =>
    (msg, fields) =>
      void held.push(() => write(msg, fields));
  return {
    log: { ...log, warn: hold(log.warn), error: hold(log.error) },
    show: () => {
      for (const write of held.splice(0)) write();
    },
  };
}

async function analyzeLocally(ctx: Context, out: Output, leak: string, opts: AnalyzeOptions): Promise<number> {
  checkLeak(leak);
  checkReportPath(opts.report);
  const progress = createProgress(!out.json && Boolean(process.stderr.isTTY));
  progress.stage(`analysing ${path.basename(leak)}`);
  const contentType = opts.type ?? (await ctx.repos.content.find(opts.content))?.type;
  const warnings = holdWarnings(ctx.log);
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const outcome = await analyzeLocalLeak(
      ctx.derive({ log: warnings.log }),
      leak,
      { contentId: opts.content, contentType: opts.type },
      {
        backend: () =>
          ctx.dtcwt(opts.backend).then((b) => {
            if (!out.json) progress.note(`analysing with DTCWT backend ${b.name}`);
            return b;
          }),
        signal: controller.signal,
        onProgress: (stage, done, total) => {
          const { label, unit } = stageOf(stage, contentType);
          if (unit) progress.update(label, Math.round(done), Math.round(total), unit);
          else progress.stage(label);
        },
      },
    ).catch((err) => {
      warnings.show();
      throw err;
    });
    if (controller.signal.aborted) {
      progress.stop();
      out.error(`drm: analysis cancelled; case ${outcome.id} is recorded as failed`);
      return CANCELLED;
    }
    progress.finish('analysis done');
    if (outcome.status === 'failed' && outcome.failureReason?.startsWith('analysis failed:')) warnings.show();
    const body = analysisBody(outcome, ctx.config.apiShape, 'operator');
    const code = printAnalysis(out, body as unknown as Json, ctx.config.apiShape === 'a');
    if (opts.report) {
      // The finding stands and is printed; a report that fails is said, not turned into a failed analysis.
      try {
        writeReportFile(out, opts.report, await evidenceReport(ctx, outcome, 'operator'));
      } catch (err) {
        out.error(
          `drm: case ${outcome.id} is decided, but its report could not be ` +
            `written: ${(err as Error).message} (drm cases show ${outcome.id} --report FILE ` +
            `tries again)`,
        );
      }
    }
    return code;
  } finally {
    progress.stop();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}
