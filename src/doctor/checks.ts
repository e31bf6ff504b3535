import fs from 'node:fs';
import { backendKind, createDtcwtBackend, probeCuda } from '../../gpu/index.js';
import type { Config } from '../config.js';
import { migrationsFor } from '../db/migrations/index.js';
import { openDatabase } from '../db/database.js';
import { createLogger } from '../log.js';
import { mediaBinaries } from '../media/binaries.js';
import type { Check } from './check.js';
import { mediaChecks } from './media-checks.js';
import { storeChecks } from './store-checks.js';

export type { Check } from './check.js';

/** `drm doctor`: what this machine and deployment need, each with the fix when it is missing. */
export async function runChecks(config: Config, env: NodeJS.ProcessEnv = process.env): Promise<Check[]> {
  let bins: ReturnType<typeof mediaBinaries> | undefined;
  const checks: Check[] = [];
  try {
    bins = mediaBinaries(env);
  } catch (err) {
    checks.push({
      name: 'ffmpeg',
      status: 'fail',
      detail: `no ffmpeg found: ${(err as Error).message}`,
      fix: 'npm ci, or set DRM_FFMPEG and DRM_FFPROBE',
    });
  }
  if (bins) checks.push(...mediaChecks(bins));
  checks.push(
    await dtcwtCheck(),
    await gpuCheck(),
    ...deploymentChecks(config, env),
    await databaseCheck(config),
    ...(await storeChecks(config.storage)),
  );
  checks.push(
    fs.existsSync('/usr/bin/chromium')
      ? { name: 'chromium (tests)', status: 'ok', detail: '/usr/bin/chromium' }
      : {
          name: 'chromium (tests)',
          status: 'warn',
          detail: 'not found: the hls.js end-to-end test needs it',
          fix: 'apt-get install chromium',
        },
  );
  return checks;
}

async function dtcwtCheck(): Promise<Check> {
  try {
    const backend = await createDtcwtBackend(backendKind(undefined));
    const { name, note } = backend;
    await backend.close();
    const why = note ? `; ${note}` : '';
    return { name: 'DTCWT backend', status: 'ok', detail: `${name} (what drm ingest and analyze use${why})` };
  } catch (err) {
    return { name: 'DTCWT backend', status: 'fail', detail: (err as Error).message, fix: 'npm ci again' };
  }
}

async function gpuCheck(): Promise<Check> {
  const probe = await probeCuda();
  if (probe.ok)
    return { name: 'GPU backend', status: 'ok', detail: `CUDA on ${probe.device}: --backend auto marks on the GPU` };
  return {
    name: 'GPU backend',
    status: 'warn',
    detail: `CUDA not used (${probe.reason}): marking and analysis run on the CPU`,
    fix: 'on an NVIDIA machine: install the NVIDIA driver (the CUDA toolkit is not needed)',
  };
}

function deploymentChecks(config: Config, env: NodeJS.ProcessEnv): Check[] {
  const dir = config.dataDir;
  if (!fs.existsSync(dir))
    return [
      {
        name: 'data directory',
        status: 'fail',
        detail: `${dir} does not exist`,
        fix: `drm serve --data-dir ${dir} creates a deployment`,
      },
    ];
  let writable = true;
  try {
    fs.accessSync(dir, fs.constants.W_OK);
  } catch {
    writable = false;
  }
  const secret = env.DRM_SECRET ? 'DRM_SECRET' : fs.existsSync(`${dir}/secret.key`) ? `${dir}/secret.key` : undefined;
  return [
    writable
      ? { name: 'data directory', status: 'ok', detail: `${dir} is writable` }
      : {
          name: 'data directory',
          status: 'fail',
          detail: `${dir} is not writable`,
          fix: `chown or chmod ${dir} for the user drm runs as`,
        },
    secret
      ? { name: 'server secret', status: 'ok', detail: `from ${secret}` }
      : {
          name: 'server secret',
          status: 'fail',
          detail: 'no secret.key and no DRM_SECRET',
          fix:
            'drm serve makes one on a new deployment; for an existing one, restore ' +
            'secret.key (marks cannot be read without it)',
        },
  ];
}

async function databaseCheck(config: Config): Promise<Check> {
  const name = 'database';
  if (config.db.startsWith('sqlite:') && !fs.existsSync(config.db.slice('sqlite:'.length))) {
    return {
      name,
      status: 'fail',
      detail: `no database at ${config.db.slice('sqlite:'.length)}`,
      fix: 'drm serve or drm migrate creates it',
    };
  }
  try {
    const db = await openDatabase(config.db, { log: createLogger('silent'), migrate: false });
    try {
      const applied = await db.appliedVersion();
      const expected = migrationsFor(db.dialect).at(-1)?.version ?? 0;
      return applied >= expected
        ? { name, status: 'ok', detail: `${db.dialect}, schema version ${applied}` }
        : {
            name,
            status: 'fail',
            detail: `${db.dialect}, schema version ${applied} of ${expected}`,
            fix: 'drm migrate',
          };
    } finally {
      await db.close();
    }
  } catch (err) {
    const where = config.db.startsWith('sqlite:') ? config.db : 'the Postgres database';
    return {
      name,
      status: 'fail',
      detail: `cannot open ${where}: ${(err as Error).message.slice(0, 120)}`,
      fix: 'check --db / DRM_DB',
    };
  }
}
