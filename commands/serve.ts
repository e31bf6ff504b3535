import { type ConfigInput, resolveConfig } from '../src/config.js';
import type { Context } from '../src/context.js';
import { createContext } from '../src/create-context.js';
import { isNewDeployment } from '../src/deployment.js';
import { errorFields } from '../src/log.js';
import { startServer } from '../server/listen.js';
import type { DbOptions } from './options.js';
import { createOutput, reportError } from './output.js';

/** drm serve: runs until SIGTERM or SIGINT, then drains requests in flight and closes the database. */
export async function serve(opts: DbOptions & ConfigInput): Promise<number> {
  const out = createOutput(Boolean(opts.json));
  let ctx: Context | undefined;
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    const config = resolveConfig(opts);
    // Said at once, before migrations and the rest of start-up, so that a silent terminal is never
    // the first thing an operator sees, and one who mistyped --data-dir sees it before anything else.
    out.error(
      isNewDeployment(config)
        ? `drm serve: starting, creating a new deployment in ${config.dataDir} (no database there yet)`
        : `drm serve: starting on the deployment in ${config.dataDir} ` +
            `(database ${config.db.startsWith('postgres') ? 'postgres' : config.db})`,
    );
    ctx = await createContext(config);
    server = await startServer(ctx);
  } catch (err) {
    // Nothing listens: close what was opened (a Postgres pool would keep the process alive).
    await ctx?.db.close().catch(() => {});
    return reportError(out, err);
  }
  const { log, config, db } = ctx;
  const dialect = db.dialect === 'sqlite' ? config.db : 'postgres';
  // One line, so that a supervisor or a test can read the address as soon as it is there.
  if (out.json) {
    const { apiShape, webhookWorker, analysis, trustProxy } = config;
    const { location: store } = ctx.storage.backend;
    const { segmentDelivery } = config.storage;
    out.write(
      JSON.stringify({
        url: server.url,
        port: server.port,
        db: db.dialect,
        store,
        segmentDelivery,
        apiShape,
        webhookWorker,
        analysis,
        trustProxy,
      }),
    );
  } else {
    const worker =
      (config.webhookWorker ? '' : ', webhook deliveries off') + (config.analysis ? '' : ', analyses left to workers');
    const store = ctx.storage.backend.location;
    const delivery = config.storage.segmentDelivery === 'redirect' ? ', segments by redirect' : '';
    out.write(
      `drm serve listening on ${server.url} (database ${dialect}, ` +
        `content ${store}${delivery}, api shape ${config.apiShape}${worker})`,
    );
  }
  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      log.info('shutting down', { signal });
      server.close().then(
        () => resolve(0),
        (err) => {
          log.error('shutdown failed', errorFields(err));
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
