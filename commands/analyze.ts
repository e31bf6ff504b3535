import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createDtcwtBackend, type DtcwtBackend, type DtcwtBackendKind } from '../gpu/index.js';
import type { Context } from '../src/context.js';
import type { CaseRow } from '../src/db/repos/index.js';
import type { Logger } from '../src/log.js';
import { openCase, uploadsDir } from '../src/domain/forensics/cases.js';
import { ForensicsQueue } from '../src/domain/forensics/queue.js';
import type { AnalysisStage } from '../src/domain/forensics/analyze.js';
import { notFound } from '../src/errors.js';
import { analysisBody } from '../src/present/forensics.js';
import type { DbOptions } from './options.js';
import { CANCELLED, EXIT, FAILED, type Json, printAnalysis } from './analysis-report.js';
import { analyzeOnServer, checkLeak } from './analyze-server.js';
import { createTicker } from './ticker.js';
import { createOutput, type Output, reportError } from './output.js';
import { withContext } from './with-context.js';

/**
 * `drm analyze <leak>`: trace a leaked copy to the viewer who received it, through the same core
 * as POST /api/v1/forensics/analyze. Locally (the default) the case is opened and run in this
 * process on the data directory's database; with --server and --api-key the leak is uploaded to
 * a running `drm serve`. The exit code is the finding, for scripts: 0 strong match, 2 weak
 * match, 3 no match, 1 any error (a failed case included), 130 cancelled.
 */
export interface AnalyzeOptions extends DbOptions {
  content: string;
  type?: 'video' | 'music';
  server?: string;
  apiKey?: string;
  backend?: DtcwtBackendKind;
}




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
  return code === EXIT.weak_match && !decided ? FAILED : code;
}

/** One line on stderr, like every drm error; always exit 1, since 2 and 3 are findings here. */
function failWith(out: Output, err: unknown): number {
  reportError(out, err);
  return FAILED;
}


// ---------------------------------------------------------------------------------------------
// Local: the data directory's database, the case run in this process.

/** What the analysis is doing, for the ticking line. */
export function stageLine(stage: AnalysisStage, done: number, total: number): string {
  const share = total > 0 ? ` ${Math.min(100, Math.floor((100 * done) / total))}%` : '';
  if (stage === 'decode') return `decoding the leak${share}`;
  if (stage === 'align') return 'aligning the leak with the original';
  if (stage === 'score') return `reading the mark, ${done}/${total} frames`;
  return 'matching against the viewers who streamed it';
}

async function analyzeLocally(ctx: Context, out: Output, leak: string, opts: AnalyzeOptions): Promise<number> {
  const stat = checkLeak(leak);
  const content = await ctx.repos.content.find(opts.content);
  if (!content) throw notFound(`content ${opts.content}`);
  // The case owns its upload and removes it (openCase on a refused request, the queue when done):
  // it gets a copy in the uploads directory, never the user's own file.
  const upload = path.join(uploadsDir(ctx), `${randomUUID()}.upload`);
  fs.copyFileSync(leak, upload);
  let row: CaseRow;
  try {
    row = await openCase(ctx, null, { path: upload, name: path.basename(leak), bytes: stat.size }, content.id, opts.type ?? content.type);
  } catch (err) {
    fs.rmSync(upload, { force: true });
    throw err;
  }

  const ticker = createTicker(!out.json && Boolean(process.stderr.isTTY), `analysing ${path.basename(leak)}`);
  let backend: Promise<DtcwtBackend> | undefined;
  // The queue logs a failed case with its error; here the case's reason is printed instead, so
  // its warnings wait and are shown only where that reason is the terse one of an internal error.
  const { log } = ctx;
  const held: Array<() => void> = [];
  const hold = (write: Logger['error']): Logger['error'] => (msg, fields) => void held.push(() => write(msg, fields));
  const showHeld = () => {
    for (const write of held.splice(0)) write();
  };
  const queueCtx: Context = { ...ctx, log: { ...log, warn: hold(log.warn), error: hold(log.error) } };
  const queue = new ForensicsQueue(queueCtx, {
    backend: () => {
      backend ??= createDtcwtBackend(opts.backend ?? 'auto').then((b) => {
        if (!out.json) ticker.note(`analysing with DTCWT backend ${b.name}`);
        return b;
      });
      return backend;
    },
  });
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const outcome = await queue.run(row.id, controller.signal, (stage, done, total) => ticker.label(stageLine(stage, done, total))).catch((err) => {
      showHeld();
      throw err;
    });
    if (controller.signal.aborted) {
      ticker.stop();
      out.error(`drm: analysis cancelled; case ${row.id} is recorded as failed`);
      return CANCELLED;
    }
    ticker.stop();
    if (outcome.status === 'failed' && outcome.failureReason?.startsWith('analysis failed:')) showHeld();
    const body = analysisBody(outcome, ctx.config.apiShape, 'operator');
    return printAnalysis(out, body as unknown as Json, ctx.config.apiShape === 'a');
  } finally {
    ticker.stop();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await queue.stop();
  }
}
