import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { createDtcwtBackend, type DtcwtBackend, type DtcwtBackendKind } from '../gpu/index.js';
import type { Context } from '../src/context.js';
import type { CaseRow } from '../src/db/repos/index.js';
import type { Logger } from '../src/log.js';
import { failedOutcome, openCase, uploadsDir } from '../src/domain/forensics/cases.js';
import { ForensicsQueue } from '../src/domain/forensics/queue.js';
import { badRequest, notFound } from '../src/errors.js';
import { analysisBody } from '../src/present/forensics.js';
import { ID_BITS } from '../src/watermark/segments.js';
import type { DbOptions } from './main.js';
import { createOutput, type Output, printJson, printTable, reportError } from './output.js';
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

const EXIT = { strong_match: 0, weak_match: 2, no_match: 3 } as const;
const FAILED = 1;
const CANCELLED = 130;

/**
 * Below this size the leak is analysed within the upload request (POST without ?async), whose
 * answer is exactly the analyze response printed by --json. Above it the analysis may outlast a
 * request (fetch gives up on a response whose headers take over 300 s), so the leak is queued
 * with ?async=true and its case polled; no endpoint serves the analyze response again, so --json
 * then prints the case detail (GET /api/v1/forensics/cases/{id}) instead.
 */
const ASYNC_FROM_BYTES = 200 * 1024 * 1024;
const POLL_MS = 1000;

/** A body of the API (or analysisBody), read field by field. */
type Json = { [key: string]: unknown };
const obj = (v: unknown): Json | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Json) : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined);

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

function checkLeak(leak: string): fs.Stats {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(leak);
  } catch {
    throw badRequest(`leak ${leak} does not exist`);
  }
  if (!stat.isFile()) throw badRequest(`leak ${leak} is not a file`);
  return stat;
}

// ---------------------------------------------------------------------------------------------
// Local: the data directory's database, the case run in this process.

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
  let stop: () => void = () => {};
  const cancelled = new Promise<'cancelled'>((resolve) => {
    stop = () => resolve('cancelled');
  });
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const running = queue.run(row.id);
  running.catch(() => {}); // awaited below, or given up on when cancelled
  let gaveUp = false;
  try {
    const outcome = await Promise.race([running, cancelled]).catch((err) => {
      showHeld();
      throw err;
    });
    if (outcome === 'cancelled') {
      gaveUp = true;
      ticker.stop();
      // The analysis fails at its next transform once the backend is closed (its decoders are
      // killed as it unwinds); the case is then recorded as cancelled rather than as an error.
      await (await backend?.catch(() => undefined))?.close();
      await Promise.race([running.catch(() => undefined), new Promise((r) => setTimeout(r, 10_000).unref())]);
      const now = await ctx.repos.forensicCases.find(row.id);
      if (now?.status !== 'completed') await ctx.repos.forensicCases.finish(row.id, failedOutcome('analysis cancelled on the command line', ctx.clock.now()));
      fs.rmSync(upload, { force: true });
      out.error(`drm: analysis cancelled; case ${row.id} is recorded as failed`);
      return CANCELLED;
    }
    ticker.stop();
    if (outcome.status === 'failed' && outcome.failureReason?.startsWith('analysis failed:')) showHeld();
    const body = analysisBody(outcome, ctx.config.apiShape);
    return printAnalysis(out, body as unknown as Json, ctx.config.apiShape === 'a');
  } finally {
    ticker.stop();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    if (!gaveUp) await queue.stop();
  }
}

// ---------------------------------------------------------------------------------------------
// Server: POST /api/v1/forensics/analyze on a running `drm serve`.

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

async function analyzeOnServer(leak: string, opts: AnalyzeOptions, out: Output): Promise<number> {
  if (!opts.server || !opts.apiKey) throw badRequest('--server and --api-key go together: the server to analyse on and an API key with the forensics scope');
  for (const [flag, given] of [['--db', opts.db], ['--data-dir', opts.dataDir], ['--backend', opts.backend]] as const) {
    if (given !== undefined) throw badRequest(`${flag} applies to local analysis only, not with --server`);
  }
  let base: URL;
  try {
    base = new URL(opts.server);
  } catch {
    throw badRequest(`--server must be a URL such as http://127.0.0.1:8080, got ${JSON.stringify(opts.server)}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw badRequest(`--server must be an http or https URL, got ${JSON.stringify(opts.server)}`);
  const api = (p: string) => new URL(`${base.pathname.replace(/\/+$/, '')}/api/v1/forensics${p}`, base).toString();
  const stat = checkLeak(leak);
  const useAsync = stat.size >= ASYNC_FROM_BYTES;
  const headers = { authorization: `Bearer ${opts.apiKey}` };

  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  const ticker = createTicker(!out.json && Boolean(process.stderr.isTTY), `uploading ${path.basename(leak)} and analysing on ${base.host}`);
  let caseId: string | undefined;
  try {
    // The fields first, then the file, read from disk as it is sent (openAsBlob never holds it whole).
    const form = new FormData();
    form.set('contentId', opts.content);
    form.set('contentType', opts.type ?? 'video');
    form.set('file', new File([await fs.openAsBlob(leak)], path.basename(leak)));
    const answer = await call(api(`/analyze${useAsync ? '?async=true' : ''}`), { method: 'POST', headers, body: form, signal: controller.signal }, base);
    if (!useAsync) {
      ticker.stop();
      return printAnalysis(out, answer);
    }
    caseId = text(answer.caseId);
    if (!caseId) throw new ServerError('the server answered without a case id', undefined, 200);
    ticker.label(`analysing case ${caseId} on ${base.host}`);
    for (;;) {
      await sleep(POLL_MS, controller.signal);
      const detail = await call(api(`/cases/${encodeURIComponent(caseId)}`), { headers, signal: controller.signal }, base);
      // Shape B nests the case ({case, evidenceChain}); shape A is flat.
      const flat = obj(detail.case) ? { ...(detail.case as Json), evidenceChain: detail.evidenceChain } : detail;
      if (flat.status === 'processing') continue;
      ticker.stop();
      if (out.json) {
        printJson(out, detail);
        return exitFor(flat);
      }
      return printAnalysis(out, flat);
    }
  } catch (err) {
    ticker.stop();
    if (controller.signal.aborted) {
      out.error(
        caseId
          ? `drm: stopped waiting; case ${caseId} goes on on the server (GET /api/v1/forensics/cases/${caseId})`
          : 'drm: cancelled; a case the server already opened goes on there (GET /api/v1/forensics/cases)',
      );
      return CANCELLED;
    }
    if (err instanceof ServerError) {
      if (out.json) out.error(JSON.stringify({ error: err.message, ...(err.code && { code: err.code }), status: err.status }));
      else out.error(`drm: ${err.message}${err.code ? ` (${err.code})` : ''}`);
      return FAILED;
    }
    if (caseId && err instanceof Error) throw new Error(`${err.message} (case ${caseId} goes on on the server)`);
    throw err;
  } finally {
    ticker.stop();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** One request: its JSON body, a ServerError for an error answer, a one-line error when the server cannot be reached. */
async function call(url: string, init: RequestInit, base: URL): Promise<Json> {
  let res: Response;
  try {
    res = await fetch(url, init);
  } catch (err) {
    if (init.signal?.aborted) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Error(`cannot reach ${base.origin}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const raw = await res.text();
  let body: Json | undefined;
  try {
    body = obj(JSON.parse(raw));
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const message = text(body?.error) ?? `the server answered HTTP ${res.status}${raw && raw.length < 200 ? `: ${raw.trim()}` : ''}`;
    throw new ServerError(message, text(body?.code), res.status);
  }
  if (!body) throw new ServerError(`the server answered HTTP ${res.status} without a JSON body`, undefined, res.status);
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

// ---------------------------------------------------------------------------------------------
// Output: the analyze response as JSON, or a summary and the evidence chain for people.

function exitFor(body: Json): number {
  if (body.status === 'failed') return FAILED;
  const c = body.classification;
  return c === 'strong_match' || c === 'weak_match' || c === 'no_match' ? EXIT[c] : FAILED;
}

/**
 * Prints an analyze response (or a case detail, flattened) and returns the exit code of its finding.
 * `shapeA` is known locally; from a server it is read off the evidence chain (A names its parties as strings).
 */
function printAnalysis(out: Output, body: Json, shapeA?: boolean): number {
  const code = exitFor(body);
  if (out.json) {
    printJson(out, body);
    if (body.status === 'failed') out.error(`drm: case ${text(body.caseId) ?? ''} failed: ${text(body.failureReason) ?? 'no reason given'}`);
    return code;
  }
  const caseId = text(body.caseId) ?? text(body.id) ?? '?';
  if (body.status === 'failed') {
    out.error(`drm: case ${caseId} failed: ${text(body.failureReason) ?? 'no reason given'}`);
    return FAILED;
  }
  const chain = obj(body.evidenceChain);
  const a = shapeA ?? typeof chain?.organization === 'string';
  const analysis = obj(body.analysis);
  const confidence = typeof body.confidence === 'number' ? body.confidence : 0;
  const bits = a ? Math.round(confidence * ID_BITS) : confidence;
  const fp = typeof analysis?.falsePositiveProbability === 'number' ? analysis.falsePositiveProbability : undefined;
  const confusion = typeof analysis?.confusionProbability === 'number' ? analysis.confusionProbability : undefined;
  const candidates = typeof analysis?.candidates === 'number' ? analysis.candidates : undefined;

  out.write(`case ${caseId}: ${text(body.classification) ?? 'undecided'}`);
  out.write(`  binaryId        ${text(body.binaryId) ?? '-'}`);
  out.write(`  confidence      ${bits} of ${ID_BITS} bits supported`);
  if (fp !== undefined) {
    const others =
      candidates === 1 ? '1 candidate, no other viewer to confuse with' : `${candidates ?? '?'} candidates, confusion with another viewer ${confusion === undefined ? '?' : scientific(confusion)}`;
    out.write(`  false positive  ${scientific(fp)} (${others})`);
  }
  const rows = evidenceRows(body, chain);
  if (rows) printTable(out, ['field', 'value'], rows);
  else out.write('no viewer named');
  const segments = Array.isArray(analysis?.segments) ? (analysis.segments as unknown[]).map(obj).filter((s) => s !== undefined) : [];
  if (segments.length > 0) {
    out.write(
      segments
        .map((s) => {
          const z = typeof s.z === 'number' ? s.z.toFixed(1) : '?';
          const variant = s.bit === '0' ? 'A' : s.bit === '1' ? 'B' : '?';
          return `seg ${text(s.index) ?? '?'}: z ${z} (${variant})`;
        })
        .join(', '),
    );
  }
  const unmatched = text(obj(analysis?.alignment)?.unmatched);
  if (unmatched) out.write(`the leak does not line up with the content: ${unmatched}`);
  return code;
}

function scientific(p: number): string {
  if (p === 0) return '< 1e-300';
  if (p === 1) return '1';
  return p.toExponential(1);
}

/**
 * The evidence chain as field / value rows, from either shape: B's chain names every party as an
 * object, A's as strings; the analyze response's matchedSession (and a case detail's matched*
 * fields) fill in the rest. Null when no viewer is named.
 */
function evidenceRows(body: Json, chain: Json | undefined): string[][] | null {
  const m = obj(body.matchedSession);
  if (!m && !chain) return null;
  const org = obj(chain?.organization);
  const key = obj(chain?.apiKey);
  const wallet = obj(chain?.wallet);
  const session = obj(chain?.session);
  const viewer = obj(chain?.viewer);
  const content = obj(chain?.content);

  const viewerId = text(m?.viewerId) ?? text(viewer?.viewerId) ?? text(chain?.viewer) ?? text(body.matchedViewerId);
  const external = text(m?.externalViewerId);
  const address = text(wallet?.address) ?? text(m?.walletAddress) ?? text(chain?.wallet) ?? text(body.matchedWallet);
  const sessionId = text(m?.sessionId) ?? text(session?.id);
  const created = text(session?.createdAt) ?? text(m?.streamDate) ?? text(chain?.streamDate) ?? text(body.matchedSessionDate);
  const bytes = typeof session?.bytesServed === 'number' ? `${session.bytesServed.toLocaleString('en-US')} bytes served` : undefined;

  const rows: Array<[string, string | undefined]> = [
    ['organization', org ? `${text(org.name) ?? ''} (${text(org.id) ?? '?'})` : (text(chain?.organization) ?? text(m?.organization) ?? text(body.matchedOrganization))],
    ['API key', key ? `${text(key.prefix) ?? '?'} (${text(key.name) ?? 'unnamed'})` : text(m?.apiKey)],
    ['viewer', viewerId && (external && external !== viewerId ? `${viewerId} (external id ${external})` : viewerId)],
    ['wallet', address && (wallet && typeof wallet.hasOwnWallet === 'boolean' ? `${address} (own wallet: ${wallet.hasOwnWallet ? 'yes' : 'no'})` : address)],
    ['session', sessionId && [sessionId, created && `created ${created}`, bytes].filter(Boolean).join(', ')],
    ['IP address', text(m?.ipAddress) ?? text(viewer?.ipAddress) ?? text(chain?.ipAddress) ?? text(body.matchedIpAddress)],
    ['user agent', text(viewer?.userAgent)],
    ['content', content ? `${text(content.title) ?? ''} (${text(content.contentId) ?? '?'}, ${text(content.contentType) ?? '?'})` : (text(chain?.content) ?? text(body.contentId))],
  ];
  return rows.filter((r): r is [string, string] => r[1] !== undefined && r[1] !== '');
}

// ---------------------------------------------------------------------------------------------

interface Ticker {
  label(text: string): void;
  /** a line of its own above the ticking one */
  note(text: string): void;
  stop(): void;
}

/**
 * An analysis reports no progress through the queue, so a terminal gets an elapsed-time line,
 * redrawn every second on stderr; nothing at all for scripts (no TTY) or with --json.
 */
function createTicker(enabled: boolean, initial: string): Ticker {
  if (!enabled) return { label() {}, note: (t) => void process.stderr.write(`${t}\n`), stop() {} };
  const started = Date.now();
  let current = initial;
  let running = true;
  const draw = () => process.stderr.write(`\r\x1b[2K${current}… (elapsed ${Math.floor((Date.now() - started) / 1000)} s)`);
  const timer = setInterval(draw, 1000);
  timer.unref();
  draw();
  return {
    label(t) {
      current = t;
      if (running) draw();
    },
    note(t) {
      if (!running) return void process.stderr.write(`${t}\n`);
      process.stderr.write(`\r\x1b[2K${t}\n`);
      draw();
    },
    stop() {
      if (!running) return;
      running = false;
      clearInterval(timer);
      process.stderr.write('\r\x1b[2K');
    },
  };
}
