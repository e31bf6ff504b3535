import { type ConfigInput, resolveConfig } from '../src/config.js';
import { type Context, createContext } from '../src/context.js';
import type { DbOptions } from './main.js';
import { createOutput, type Output, reportError } from './output.js';

/**
 * Runs a command body with a context on the database the options name, closes it afterwards,
 * and turns any error into one line and an exit code.
 */
export async function withContext(
  opts: DbOptions & ConfigInput,
  body: (ctx: Context, out: Output) => Promise<number | undefined>,
  contextOptions: { migrate?: boolean } = {},
): Promise<number> {
  const out = createOutput(Boolean(opts.json));
  let ctx: Context | undefined;
  try {
    const config = resolveConfig({ logLevel: 'warn', ...opts });
    ctx = await createContext(config, contextOptions);
    return (await body(ctx, out)) ?? 0;
  } catch (err) {
    return reportError(out, err);
  } finally {
    await ctx?.db.close();
  }
}
