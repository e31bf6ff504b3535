import fs from 'node:fs';
import path from 'node:path';
import { Agent } from 'undici';
import { badRequest } from '../src/errors.js';
import type { AnalysisStage } from '../src/domain/forensics/analyze.js';
import { CANCELLED, exitFor, FAILED, type Json, obj, printAnalysis, stageOf, text } from './analysis-report.js';
import { type AnalyzeOptions, typedOption } from './options.js';
import { type Output, printJson } from './output.js';
import { checkReportPath, writeReportFile } from './report-file.js';
import { createProgress, type Progress } from './progress.js';
import { multipartWithFile } from './upload-body.js';

// `drm analyze --server URL --api-key KEY`: POST /api/v1/forensics/analyze on a running `drm serve`.

/**
 * Below this size, and for scripts (--json, or no terminal to draw progress on), the leak is
 * analysed within the upload request (POST without ?async), whose answer is exactly the analyze
 * response printed by --json; that request may wait long for a busy queue or a worker
 * (`drm serve --no-analysis`), so it is sent without undici's 300-s wait for response headers.
 * Above it, or on a terminal, the leak is queued with ?async=true and its case polled, showing
 * the stage and counts its server or worker writes; no endpoint serves the analyze response
 * again, so --json then prints the case detail (GET /api/v1/forensics/cases/{id}) instead.
 */
const ASYNC_FROM_BYTES = 200 * 1024 * 1024;
const POLL_MS = 1000;

/** An error answer of the API ({error, code}), or an unreadable one. */
class ServerError extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    readonly status: number,
  ) {
    super(message);
  }
}

/** The server's base URL, once --server, --api-key and the local-only flags are checked. */
function serverBase(opts: AnalyzeOptions): URL {
  if (!opts.server || !opts.apiKey)
    throw badRequest(
      '--server and --api-key go together: the server to analyse on and an API key with the forensics scope',
    );
  for (const [flag, key] of [
    ['--db', 'db'],
    ['--data-dir', 'dataDir'],
    ['--backend', 'backend'],
  ] as const) {
    if (typedOption(opts, key)) throw badRequest(`${flag} applies to local analysis only, not with --server`);
  }
  let base: URL;
  try {
    base = new URL(opts.server);
  } catch {
    throw badRequest(`--server must be a URL such as http://127.0.0.1:8080, got ${JSON.stringify(opts.server)}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw badRequest(`--server must be an http or https URL, got ${JSON.stringify(opts.server)}`);
  return base;
}

export async function analyzeOnServer(leak: string, opts: AnalyzeOptions, out: Output): Promise<number> {
  const base = serverBase(opts);
  checkReportPath(opts.report);
  const api = (p: string) => new URL(`${base.pathname.replace(/\/+$/, '')}/api/v1/forensics${p}`, base).toString();
  const stat = checkLeak(leak);
  const showsProgress = !out.json && Boolean(process.stderr.isTTY);
  const useAsync = stat.size >= ASYNC_FROM_BYTES || showsProgress;
  const headers = { authorization: `Bearer ${opts.apiKey}` };

  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const progress = createProgress(showsProgress);
  let caseId: string | undefined;
  // The case's evidence report, fetched once the case is decided (GET …/cases/{id}/report).
  // A report that cannot be fetched (an older server, a dropped connection) does not undo the
  // finding printed: it is said, and the exit code stays the analysis's.
  const withReport = async (id: string | undefined, code: number): Promise<number> => {
    if (!opts.report || !id) return code;
    try {
      writeReportFile(
        out,
        opts.report,
        (await request(api(`/cases/${encodeURIComponent(id)}/report`), { headers, signal: controller.signal }, base))
          .raw,
      );
    } catch (err) {
      out.error(
        `drm: case ${id} is decided, but its report could not be ` +
          `fetched: ${(err as Error).message} (GET /api/v1/forensics/cases/${id}/report ` +
          `fetches it again)`,
      );
    }
    return code;
  };
  try {
    const init = uploadInit(leak, opts, base, { headers, signal: controller.signal, useAsync, progress });
    const answer = await call(api(`/analyze${useAsync ? '?async=true' : ''}`), init, base);
    if (!useAsync) {
      progress.finish('analysis done');
      return await withReport(text(answer.caseId), printAnalysis(out, answer));
    }
    caseId = text(answer.caseId);
    if (!caseId) throw new ServerError('the server answered without a case id', undefined, 200);
    progress.stage(`analysing case ${caseId} on ${base.host}`);
    const id = caseId;
    const caseUrl = api(`/cases/${encodeURIComponent(id)}`);
    const { detail, flat } = await decidedCase(caseUrl, { headers, signal: controller.signal }, base, (p) =>
      showCaseProgress(progress, p, id, base.host, opts.type),
    );
    progress.finish('analysis done');
    // --json prints the case as the server gave it; a table, the flat case.
    return await withReport(caseId, out.json ? (printJson(out, detail), exitFor(flat)) : printAnalysis(out, flat));
  } catch (err) {
    progress.stop();
    return failed(out, err, controller.signal.aborted, caseId);
  } finally {
    progress.stop();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/**
 * The leak's upload: the fields first, then the file, read from disk as it is sent, with its
 * percent on a terminal. A synchronous analysis waits as long as the server takes to answer.
 */
function uploadInit(
  leak: string,
  opts: AnalyzeOptions,
  base: URL,
  o: {
    headers: Record<string, string>;
    signal: AbortSignal;
    useAsync: boolean;
    progress: ReturnType<typeof createProgress>;
  },
): RequestInit {
  const megabytes = (n: number) => Math.round(n / 1e5) / 10;
  const fields: [string, string][] = [
    ['contentId', opts.content],
    ['contentType', opts.type ?? 'video'],
  ];
  const upload = multipartWithFile(fields, leak, (sent, total) => {
    o.progress.update(`uploading ${path.basename(leak)} to ${base.host}`, megabytes(sent), megabytes(total), 'MB');
    if (sent === total) o.progress.stage(o.useAsync ? `queueing on ${base.host}` : `analysing on ${base.host}`);
  });
  const patient = o.useAsync ? {} : { dispatcher: new Agent({ headersTimeout: 0, bodyTimeout: 0 }) };
  const headers = { ...o.headers, ...upload.headers };
  return {
    method: 'POST',
    headers,
    body: upload.body,
    duplex: 'half',
    signal: o.signal,
    ...patient,
  } as unknown as RequestInit;
}

/** Polls a queued case until it is decided, handing each progress report on while it runs. */
async function decidedCase(
  url: string,
  init: { headers: Record<string, string>; signal: AbortSignal },
  base: URL,
  onProgress: (progress: unknown) => void,
): Promise<{ detail: Json; flat: Json }> {
  for (;;) {
    await sleep(POLL_MS, init.signal);
    const detail = await call(url, init, base);
    // Shape B nests the case ({case, evidenceChain}); shape A is flat.
    const flat = obj(detail.case) ? { ...(detail.case as Json), evidenceChain: detail.evidenceChain } : detail;
    if (flat.status !== 'processing') return { detail, flat };
    onProgress(flat.progress);
  }
}

/** An analysis on a server that did not end in a verdict: cancelled, refused, or failed on the way. */
function failed(out: Output, err: unknown, cancelled: boolean, caseId: string | undefined): number {
  if (cancelled) {
    out.error(
      caseId
        ? `drm: stopped waiting; case ${caseId} goes on on the server (GET /api/v1/forensics/cases/${caseId})`
        : 'drm: cancelled; a case the server already opened goes on there (GET /api/v1/forensics/cases)',
    );
    return CANCELLED;
  }
  if (err instanceof ServerError) {
    if (out.json)
      out.error(JSON.stringify({ error: err.message, ...(err.code && { code: err.code }), status: err.status }));
    else out.error(`drm: ${err.message}${err.code ? ` (${err.code})` : ''}`);
    return FAILED;
  }
  if (caseId && err instanceof Error) throw new Error(`${err.message} (case ${caseId} goes on on the server)`);
  throw err;
}

/** One request: its answer, a ServerError for an error answer, a one-line error when the server cannot be reached. */
async function request(url: string, init: RequestInit, base: URL): Promise<{ status: number; raw: string }> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (err) {
    if (init.signal?.aborted) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`cannot reach ${base.origin}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const raw = await res.text();
  if (!res.ok) {
    const body = parseJson(raw);
    const message =
      text(body?.error) ?? `the server answered HTTP ${res.status}${raw && raw.length < 200 ? `: ${raw.trim()}` : ''}`;
    throw new ServerError(message, text(body?.code), res.status);
  }
  return { status: res.status, raw };
}

function parseJson(raw: string): Json | undefined {
  try {
    return obj(JSON.parse(raw));
  } catch {
    return undefined;
  }
}

/** One request whose answer is a JSON object. */
async function call(url: string, init: RequestInit, base: URL): Promise<Json> {
  const { status, raw } = await request(url, init, base);
  const body = parseJson(raw);
  if (!body) throw new ServerError(`the server answered HTTP ${status} without a JSON body`, undefined, status);
  return body;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const done = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', done);
      resolve();
    }, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

export function checkLeak(leak: string): fs.Stats {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(leak);
  } catch {
    throw badRequest(`leak ${leak} does not exist`);
  }
  if (!stat.isFile()) throw badRequest(`leak ${leak} is not a file`);
  return stat;
}

/** The stage a server or worker last wrote for a case being analysed, with its counts, or only that it runs. */
function showCaseProgress(
  progress: Progress,
  reported: unknown,
  caseId: string,
  host: string,
  contentType: string | undefined,
): void {
  const p = obj(reported) ? (reported as { stage?: unknown; done?: unknown; total?: unknown }) : undefined;
  if (!p || typeof p.stage !== 'string' || typeof p.done !== 'number' || typeof p.total !== 'number') {
    progress.stage(`analysing case ${caseId} on ${host}`);
    return;
  }
  const { label, unit } = stageOf(p.stage as AnalysisStage, contentType);
  if (unit && p.total > 0) progress.update(`${label} (on ${host})`, Math.round(p.done), Math.round(p.total), unit);
  else progress.stage(`${label} (on ${host})`);
}
