import { latestMigration } from '../src/db/migrate.js';
import type { DbOptions } from './options.js';
import { printJson } from './output.js';
import { withContext } from './with-context.js';

export function migrateCommand(opts: DbOptions): Promise<number> {
  return withContext(
    opts,
    async (ctx, out) => {
      const applied = await ctx.db.migrate();
      const version = latestMigration(ctx.db.dialect);
      if (out.json) printJson(out, { applied, version, dialect: ctx.db.dialect });
      else
        out.write(
          applied
            ? `applied ${applied} migration(s); schema is at version ${version}`
            : `schema is up to date (version ${version})`,
        );
      return 0;
    },
    { migrate: false, newDeployment: true },
  );
}
