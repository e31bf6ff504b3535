import fs from 'node:fs';
import path from 'node:path';
import { deriveKey, loadServerSecret } from '../src/crypto/secret.js';
import { badRequest } from '../src/errors.js';
import { publishedKey, reportSigner } from '../src/report/signature.js';
import { createOutput, printJson, reportError } from './output.js';

// `drm cases key`: the public key the deployment signs its evidence reports with, to hand to whoever verifies them.

export interface KeyOptions {
  dataDir?: string;
  json?: boolean;
}

/** The report key of a deployment and where its secret was found. */
export interface DeploymentKey {
  publicKey: string;
  /** whose it is: the deployment of DRM_SECRET, or the one in the data directory whose secret.key it is */
  from: string;
}

export const deploymentDir = (dataDir: string | undefined) =>
  path.resolve(dataDir ?? process.env.DRM_DATA_DIR ?? './drm-data');

/**
 * The report key of the deployment of `dataDir` (or DRM_SECRET), or null where there is none: a
 * secret made here would be a new deployment's, whose key signed no report.
 */
export function deploymentKey(dataDir: string | undefined): DeploymentKey | null {
  const dir = deploymentDir(dataDir);
  const from = process.env.DRM_SECRET ? 'the deployment of DRM_SECRET' : `the deployment in ${dir}`;
  if (!process.env.DRM_SECRET && !fs.existsSync(path.join(dir, 'secret.key'))) return null;
  return { publicKey: reportSigner(deriveKey(loadServerSecret(dir), 'evidence-report')).publicKey, from };
}

export async function casesKey(opts: KeyOptions): Promise<number> {
  const out = createOutput(Boolean(opts.json));
  try {
    const key = deploymentKey(opts.dataDir);
    if (!key) {
      throw badRequest(
        'no secret: set DRM_SECRET or point --data-dir at the data directory of the deployment ' +
          `whose reports are to be verified (${deploymentDir(opts.dataDir)} has no secret.key)`,
      );
    }
    const published = publishedKey(key.publicKey);
    if (out.json) printJson(out, published);
    else {
      out.write(`Evidence reports of ${key.from} are signed by`);
      out.write(`  Ed25519 key  ${published.publicKey}`);
      out.write(`  fingerprint  ${published.fingerprint}`);
    }
    return 0;
  } catch (err) {
    return reportError(out, err);
  }
}
