import { type ServerType, serve } from '@hono/node-server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Context } from '../src/context.js';
import { HOUR_MS } from '../src/clock.js';
import { expireFundRequests } from '../src/domain/billing/deposits.js';
import { IDEMPOTENCY_KEPT_MS } from '../src/domain/billing/idempotency.js';
import { PeriodCloser } from '../src/domain/billing/period-close.js';
import { ForensicsQueue } from '../src/domain/forensics/queue.js';
import { TrafficMeter } from '../src/domain/operations/traffic-meter.js';
import { WebhookWorker } from '../src/domain/webhooks/worker.js';
import { DrmError } from '../src/errors.js';
import { errorFields } from '../src/log.js';
import { createApp } from './app.js';
import { answerClientError, answerConnect } from './client-error.js';

export interface RunningServer {
  url: string;
  port: number;
  /** Stops taking connections, lets requests in flight finish, stops the worker, closes the database. */
  close(): Promise<void>;
}

export interface StartOptions {
  /** How long requests in flight may take to finish after close() before their connections are cut. */
  drainMs?: number;
}

/**
 * Starts the HTTP server, the webhook worker, the forensics queue, the billing period closer and the hourly
 * housekeeping for one context.
 */
export async function startServer(ctx: Context, options: StartOptions = {}): Promise<RunningServer> {
  // With --no-analysis cases are queued here and decided by `drm worker` processes.
  const forensics = new ForensicsQueue(ctx, { analyses: ctx.config.analysis });
  // Requests, errors, segment bytes and new streams go to the database every 5 s for drm top.
  const traffic = new TrafficMeter(ctx);
  const app = createApp(ctx, { forensics, traffic });
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: ctx.config.port, hostname: ctx.config.host }, () => resolve(s));
    s.once('error', (err) => reject(listenError(err, ctx.config.host, ctx.config.port)));
  });
  server.on('clientError', answerClientError);
  // Without a listener Node destroys a CONNECT request's socket unanswered; this server proxies nothing.
  server.on('connect', answerConnect);
  const drain = trackResponses(server);
  const worker = new WebhookWorker(ctx);
  if (ctx.config.webhookWorker) worker.start();
  // Cases queued with ?async=true, and any a restart interrupted, are picked up here.
  forensics.start();
  traffic.start();
  // Billing periods close here once they end (at start, then each minute); every server may run it.
  const periods = new PeriodCloser(ctx);
  periods.start();
  // Each payment method's money source read in the background: APUSD deposits from the chain when one is configured.
  const watchers = Object.values(ctx.payments).flatMap((method) => method.watcher?.(ctx) ?? []);
  for (const watcher of watchers) watcher.start();
  // Old rate windows and expired sign-in nonces are deleted hourly, off the request path, and
  // APUSD fund requests that waited past their window are marked expired, and Idempotency-Keys
  // older than 24 h are forgotten.
  const housekeeping = setInterval(() => {
    const now = ctx.clock.now();
    const chores = [
      ctx.repos.rateCounters.prune(now - 2 * HOUR_MS),
      ctx.repos.admins.pruneNonces(now),
      expireFundRequests(ctx),
      ctx.repos.idempotency.prune(now - IDEMPOTENCY_KEPT_MS),
    ];
    Promise.all(chores).catch((err) => {
      ctx.log.warn('housekeeping failed', errorFields(err));
    });
  }, HOUR_MS);
  housekeeping.unref();

  const { port } = server.address() as AddressInfo;
  const host = ctx.config.host.includes(':') ? `[${ctx.config.host}]` : ctx.config.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    close() {
      closing ??= (async () => {
        clearInterval(housekeeping);
        await drain(options.drainMs ?? 30_000, () =>
          ctx.log.warn('requests still in flight after the drain time; closing their connections'),
        );
        await Promise.all([
          worker.stop(),
          forensics.stop(),
          periods.stop(),
          traffic.stop(),
          ...watchers.map((w) => w.stop()),
        ]);
        await ctx.db.close();
      })();
      return closing;
    },
  };
}

const LATEST_ANSWER = Symbol('latest answer');
type SocketWithAnswer = Socket & { [LATEST_ANSWER]?: ServerResponse };

/**
 * Graceful close for a node http server. server.close() alone stops listening and drops idle
 * keep-alive connections once, but a connection whose request is in flight stays open after its
 * response until the keep-alive timeout, and may even carry further requests. So responses
 * written while draining say `Connection: close`, connections that fall idle are dropped as they
 * do, and whatever is still open after drainMs is cut.
 *
 * The answer in flight is found through its connection, each of which keeps its latest one. With
 * a set of the answers themselves, added to and deleted from on every request, V8 moved about
 * 2 KB of every keyed request's objects to the old generation (--trace-gc-nvp), and each young
 * collection took 2-3 ms instead of 1: 5-8 µs more a keyed request.
 */
function trackResponses(server: ServerType): (drainMs: number, onTimeout: () => void) => Promise<void> {
  const connections = new Set<Socket>();
  let draining = false;
  server.on('connection', (socket: Socket) => {
    connections.add(socket);
    socket.once('close', () => connections.delete(socket));
  });
  server.prependListener('request', (req: IncomingMessage, res: ServerResponse) => {
    if (draining) res.shouldKeepAlive = false;
    (req.socket as SocketWithAnswer)[LATEST_ANSWER] = res;
  });
  return (drainMs, onTimeout) => {
    draining = true;
    for (const socket of connections) {
      const res = (socket as SocketWithAnswer)[LATEST_ANSWER];
      if (res && !res.headersSent) res.shouldKeepAlive = false;
    }
    const http = server as ServerType & { closeIdleConnections?: () => void; closeAllConnections?: () => void };
    return new Promise<void>((resolve) => {
      const idle = setInterval(() => http.closeIdleConnections?.(), 100);
      const cut = setTimeout(() => {
        onTimeout();
        http.closeAllConnections?.();
      }, drainMs);
      server.close(() => {
        clearInterval(idle);
        clearTimeout(cut);
        resolve();
      });
    });
  };
}

/** A failed listen as one sentence an operator can act on (the port taken, the address not ours). */
function listenError(err: Error & { code?: string }, host: string, port: number): Error {
  const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (err.code === 'EADDRINUSE') {
    return new DrmError(
      'CONFLICT',
      `cannot listen on ${where}: the address is already in use (another drm serve?); pick another --port`,
      {
        cause: err,
      },
    );
  }
  if (err.code === 'EADDRNOTAVAIL') {
    return new DrmError('BAD_REQUEST', `cannot listen on ${where}: --host is not an address of this machine`, {
      cause: err,
    });
  }
  if (err.code === 'EACCES') {
    return new DrmError('CONFLICT', `cannot listen on ${where}: permission denied (ports below 1024 need privileges)`, {
      cause: err,
    });
  }
  return err;
}
