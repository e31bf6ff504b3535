import { type ServerType, serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import type { Context } from '../src/context.js';
import { HOUR_MS } from '../src/clock.js';
import { WebhookWorker } from '../src/domain/webhooks/worker.js';
import { errorFields } from '../src/log.js';
import { createApp } from './app.js';

export interface RunningServer {
  url: string;
  port: number;
  /** Stops taking connections, lets requests in flight finish, stops the worker, closes the database. */
  close(): Promise<void>;
}

/** Starts the HTTP server, the webhook worker and the hourly housekeeping for one context. */
export async function startServer(ctx: Context): Promise<RunningServer> {
  const app = createApp(ctx);
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: ctx.config.port, hostname: ctx.config.host }, () => resolve(s));
    s.once('error', reject);
  });
  const worker = new WebhookWorker(ctx);
  if (ctx.config.webhookWorker) worker.start();
  const housekeeping = setInterval(() => {
    ctx.repos.rateCounters.prune(ctx.clock.now() - 2 * HOUR_MS).catch((err) => {
      ctx.log.warn('pruning rate counters failed', errorFields(err));
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
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await worker.stop();
        await ctx.db.close();
      })();
      return closing;
    },
  };
}
