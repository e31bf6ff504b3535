import fs from 'node:fs';
import path from 'node:path';
import { deriveKey, loadServerSecret } from '../src/crypto/secret.js';
import { badRequest } from '../src/errors.js';
import { checkReport, reportSigner } from '../src/report/signature.js';
import { createOutput, printJson, reportError } from './output.js';

// `drm cases verify case.html`: is this evidence report the one the deployment signed, byte for byte?

export interface VerifyOptions {
  /** the deployment's public key (hex) to compare with; else the one of --data-dir's secret, when there is one */
  key?: string;
  dataDir?: string;
  json?: boolean;
}

/** The deployment's public key from its secret, without creating a data directory that is not there. */
function deploymentKey(opts: VerifyOptions): string | undefined {
  if (opts.key !== undefined) {
    if (!/^[0-9a-fA-F]{64}$/.test(opts.key))
      throw badRequest('--key must be the 64 hex characters of an Ed25519 public key');
    return opts.key.toLowerCase();
  }
  const dataDir = path.resolve(opts.dataDir ?? process.env.DRM_DATA_DIR ?? './drm-data');
  if (!process.env.DRM_SECRET && !fs.existsSync(path.join(dataDir, 'secret.key'))) return undefined;
  return reportSigner(deriveKey(loadServerSecret(dataDir), 'evidence-report')).publicKey;
}

/**
 * 0 when the report is intact and signed by the expected key (or, with no key to compare, by the key it names); 1
 * otherwise.
 */
export async function casesVerify(file: string, opts: VerifyOptions): Promise<number> {
  const out = createOutput(Boolean(opts.json));
  try {
    if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw badRequest(`${file} is not a file`);
    const check = checkReport(fs.readFileSync(file, 'utf8'), deploymentKey(opts));
    const intact = check.digestMatches && check.signatureValid && check.keyExpected !== false;
    if (out.json) printJson(out, { file, intact, ...check });
    else {
      out.write(`${file}: ${intact ? 'intact and signed' : 'NOT INTACT'}`);
      out.write(
        `  SHA-256    ${check.sha256} ` +
          `(${check.digestMatches ? 'matches the file' : 'does not match the file: it was changed'})`,
      );
      out.write(`  signature  ${check.signatureValid ? 'valid' : 'INVALID'} (Ed25519)`);
      const whose =
        check.keyExpected === null
          ? 'no deployment key to compare with (--key or --data-dir)'
          : check.keyExpected
            ? "this deployment's"
            : "NOT this deployment's";
      out.write(`  key        ${check.publicKey} (${whose})`);
    }
    return intact ? 0 : 1;
  } catch (err) {
    return reportError(out, err);
  }
}
