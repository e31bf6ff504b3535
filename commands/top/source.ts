import { type ConfigInput, resolveConfig } from '../../src/config.js';
import type { Context } from '../../src/context.js';
import { createContext } from '../../src/create-context.js';
import { requireDeploymentFiles, requireDeploymentSchema } from '../../src/deployment.js';
import { type Overview, OverviewReader } from '../../src/domain/operations/overview.js';
import { badRequest, DrmError } from '../../src/errors.js';

/** Where drm top reads its figures: the deployment's database, or a server's admin API. */
export interface OverviewSource {
  /** said in the header: which database or server */
  label: string;
  read(): Promise<Overview>;
  close(): Promise<void>;
}

export interface TopSourceOptions extends ConfigInput {
  db?: string;
  dataDir?: string;
  server?: string;
  token?: string;
}

/**
 * `typed` says whether the user typed an option: DRM_DB or DRM_DATA_DIR set for the servers
 * must not stop a --server view, but a --data-dir typed beside --server is a mistake to say.
 */
export async function openSource(
  opts: TopSourceOptions,
  typed: (option: 'db' | 'dataDir') => boolean = () => true,
): Promise<OverviewSource> {
  if (opts.server !== undefined) {
    for (const [flag, option] of [
      ['--db', 'db'],
      ['--data-dir', 'dataDir'],
    ] as const) {
      if (opts[option] !== undefined && typed(option))
        throw badRequest(
          `${flag} reads a database here; with --server the figures come from the server (leave one out)`,
        );
    }
    return serverSource(opts.server, opts.token);
  }
  return databaseSource(opts);
}

/** The database drm serve uses, opened read-mostly: no migration is run from a viewer. */
async function databaseSource(opts: TopSourceOptions): Promise<OverviewSource> {
  const config = resolveConfig({ logLevel: 'warn', ...opts });
  requireDeploymentFiles(config);
  let ctx: Context | undefined;
  try {
    ctx = await createContext(config, { migrate: false });
    await requireDeploymentSchema(ctx.db, config);
  } catch (err) {
    await ctx?.db.close();
    throw err;
  }
  const reader = new OverviewReader(ctx);
  const opened = ctx;
  return {
    label: config.db.startsWith('sqlite:') ? config.db : 'postgres',
    read: () => reader.read(),
    close: () => opened.db.close(),
  };
}

function serverSource(server: string, token: string | undefined): OverviewSource {
  if (!token)
    throw badRequest(
      '--server needs an admin token: --token or DRM_ADMIN_TOKEN (drm admin token --wallet ADDRESS makes one)',
    );
  let base: URL;
  try {
    base = new URL(server);
  } catch {
    throw badRequest(`--server must be a URL such as http://127.0.0.1:8080, got ${JSON.stringify(server)}`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw badRequest(`--server must be an http or https URL, got ${JSON.stringify(server)}`);
  const url = new URL(`${base.pathname.replace(/\/+$/, '')}/api/v1/admin/overview`, base).toString();
  return {
    label: base.origin,
    async read() {
      let res: Response;
      try {
        res = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) });
      } catch (err) {
        throw new DrmError('BAD_REQUEST', `cannot reach ${base.origin}: ${(err as Error).message}`);
      }
      const body = (await res.json().catch(() => undefined)) as
        | (Overview & { error?: string; code?: string })
        | undefined;
      if (!res.ok || !body)
        throw new DrmError(
          'BAD_REQUEST',
          `${base.origin} answered ${res.status}: ${body?.error ?? 'no JSON'}${body?.code ? ` (${body.code})` : ''}`,
        );
      return body;
    },
    close: async () => {},
  };
}
