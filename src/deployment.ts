import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.js';
import type { Database } from './db/database.js';
import { DrmError } from './errors.js';

/**
 * Only `drm serve` and `drm migrate` start a deployment. Every other command works on one that
 * exists, so a mistyped --data-dir (or DRM_DATA_DIR) is refused before anything is created there:
 * a new database and a new secret would look like an empty service, and marks keyed with that
 * secret could never be read.
 */
const noDeployment = (what: string) =>
  new DrmError(
    'BAD_REQUEST',
    `${what}: --data-dir (or DRM_DATA_DIR, --db) names no deployment; \`drm serve\` ` +
      `or \`drm migrate\` starts a new one`,
  );

/** The checks that need no database connection: the SQLite file and the server secret are there. */
export function requireDeploymentFiles(config: Config, env: NodeJS.ProcessEnv = process.env): void {
  if (config.db.startsWith('sqlite:')) {
    const file = path.resolve(config.db.slice('sqlite:'.length));
    if (!fs.existsSync(file)) throw noDeployment(`no drm database at ${file}`);
  }
  if (!env.DRM_SECRET && !fs.existsSync(path.join(config.dataDir, 'secret.key'))) {
    throw noDeployment(`no server secret in ${config.dataDir} (secret.key) and DRM_SECRET is not set`);
  }
}

/** A database drm has set up (an empty Postgres database is not one). */
export async function requireDeploymentSchema(
  db: Pick<Database, 'appliedVersion' | 'dialect'>,
  config: Config,
): Promise<void> {
  if ((await db.appliedVersion()) === 0) {
    const where = db.dialect === 'sqlite' ? config.db.slice('sqlite:'.length) : 'the Postgres database';
    throw noDeployment(`${where} holds no drm schema`);
  }
}

/** Whether `drm serve` is about to create the deployment's data directory or database. */
export function isNewDeployment(config: Config): boolean {
  if (!fs.existsSync(config.dataDir)) return true;
  return config.db.startsWith('sqlite:') && !fs.existsSync(path.resolve(config.db.slice('sqlite:'.length)));
}
