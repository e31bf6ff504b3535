import { type ConfigInput, resolveConfig } from '../src/config.js';
import { createContext } from '../src/context.js';
import { errorFields } from '../src/log.js';
import { startServer } from '../server/listen.js';
import type { DbOptions } from './main.js';
import { createOutput, printJson, reportError } from './output.js';

/** drm serve: runs until SIGTERM or SIGINT, then drains requests in flight and closes the database. */
export async function serve(opts: DbOptions & ConfigInput): Promise<number> {
  const out = createOutput(Boolean(opts.json));
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    const ctx = await createContext(resolveConfig(opts));
    server = await startServer(ctx);
    const dialect = ctx.db.dialect === 'sqlite' ? ctx.config.db : 'postgres';
    if (out.json) printJson(out, { url: server.url, port: server.port, db: ctx.db.dialect, apiShape: ctx.config.apiShape });
    else out.write(`drm serve listening on ${server.url} (database ${dialect}, api shape ${ctx.config.apiShape})`);
    await new Promise<void>((resolve) => {
      const stop = (signal: string) => {
        ctx.log.info('shutting down', { signal });
        server.close().then(resolve, (err) => {
          ctx.log.error('shutdown failed', errorFields(err));
          resolve();
        });
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });
    return 0;
  } catch (err) {
    return reportError(out, err);
  }
}
