import { type ConfigInput, resolveConfig } from '../src/config.js';
import type { Context } from '../src/context.js';
import { createContext } from '../src/create-context.js';
import { requireDeploymentFiles, requireDeploymentSchema } from '../src/deployment.js';
import { type DbOptions, outputFlags } from './options.js';
import { createOutput, type Output, reportError } from './output.js';

/**
 * Runs a command body with a context on the database the options name, closes it afterwards,
 * and turns any error into one line and an exit code. The deployment must exist (its database
 * and secret), unless the command is one that starts one (`newDeployment`).
 */
export async function withContext(
  opts: DbOptions & ConfigInput,
  body: (ctx: Context, out: Output) => Promise<number | undefined>,
  contextOptions: { migrate?: boolean; newDeployment?: boolean } = {},
): Promise<number> {
  const out = createOutput(Boolean(opts.json), outputFlags(opts));
  let ctx: Context | undefined;
  try {
    const config = resolveConfig({ logLevel: 'warn', ...opts });
    const existing = !contextOptions.newDeployment;
    if (existing) requireDeploymentFiles(config);
    ctx = await createContext(config, { migrate: existing ? false : contextOptions.migrate });
    if (existing) {
      await requireDeploymentSchema(ctx.db, config);
      if (contextOptions.migrate !== false) await ctx.db.migrate();
    }
    return (await body(ctx, out)) ?? 0;
  } catch (err) {
    return reportError(out, err);
  } finally {
    await ctx?.db.close();
  }
}
