import fs from 'node:fs';
import { badRequest } from '../src/errors.js';
import { checkReport, parseTrustedKey, type ReportCheck, type TrustedKey } from '../src/report/signature.js';
import { deploymentDir, deploymentKey } from './cases-key.js';
import { createOutput, type Output, printJson, reportError } from './output.js';

// `drm cases verify case.html`: is this evidence report the one the deployment signed, byte for byte?

export interface VerifyOptions {
  /** the deployment's public key (hex) or its fingerprint */
  key?: string;
  /** a file holding that key, or the JSON `drm cases key --json` and GET /api/v1/forensics/report-key print */
  keyFile?: string;
  /** else the key of this data directory's deployment (or DRM_SECRET's) */
  dataDir?: string;
  json?: boolean;
}

/** The exit of a report that checks out but whose signature no trusted key verified. */
export const NO_TRUSTED_KEY_EXIT = 3;

interface Trusted extends TrustedKey {
  /** where the verifier's trust in it comes from */
  from: string;
}

/** The key the verifier trusts: given, read from a file, or the deployment's own; null when there is none. */
function trustedKey(opts: VerifyOptions): Trusted | null {
  if (opts.key !== undefined && opts.keyFile !== undefined)
    throw badRequest('give the trusted key once: --key or --key-file, not both');
  if (opts.key !== undefined) return { ...parseTrustedKey(opts.key, '--key'), from: 'given with --key' };
  if (opts.keyFile !== undefined) {
    const file = opts.keyFile;
    if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw badRequest(`--key-file ${file} is not a file`);
    return { ...parseTrustedKey(fs.readFileSync(file, 'utf8'), `--key-file ${file}`), from: `read from ${file}` };
  }
  const own = deploymentKey(opts.dataDir);
  return own && { ...parseTrustedKey(own.publicKey, own.from), from: `that of ${own.from}` };
}

/** The first line: the verdict; and the exit that goes with it. */
function verdict(check: ReportCheck, trusted: Trusted | null): { line: string; exit: number } {
  if (check.intact) return { line: 'intact and signed by the trusted key', exit: 0 };
  if (!check.digestMatches) return { line: 'NOT INTACT: the file was changed after it was signed', exit: 1 };
  if (!check.signatureValid) return { line: 'NOT INTACT: its signature is invalid', exit: 1 };
  if (!trusted) return { line: 'signature not verified: no trusted key', exit: NO_TRUSTED_KEY_EXIT };
  return { line: 'NOT INTACT: not signed by the trusted key', exit: 1 };
}

function whose(check: ReportCheck, trusted: Trusted | null): string {
  if (!trusted) return 'no trusted key to compare with';
  if (check.keyExpected) return `the trusted key, ${trusted.from}`;
  return `NOT the trusted key ${trusted.fingerprint}, ${trusted.from}`;
}

function printCheck(out: Output, file: string, check: ReportCheck, trusted: Trusted | null, dataDir: string): number {
  const { line, exit } = verdict(check, trusted);
  out.write(`${file}: ${line}`);
  out.write(
    `  SHA-256      ${check.sha256} ` +
      `(${check.digestMatches ? 'matches the file' : 'does not match the file: it was changed'})`,
  );
  out.write(`  signature    ${check.signatureValid ? 'valid' : 'INVALID'} (Ed25519) for the key the file names`);
  out.write(`  key          ${check.publicKey} (${whose(check, trusted)})`);
  out.write(`  fingerprint  ${check.fingerprint}`);
  if (exit === NO_TRUSTED_KEY_EXIT) {
    // Anyone can sign a changed copy with a key of their own and name that key in the file.
    out.write(
      "Give the deployment's key: --key HEX (the key or its fingerprint), --key-file FILE (what drm cases key " +
        `--json or GET /api/v1/forensics/report-key answers), or --data-dir of the deployment (${dataDir} has ` +
        'no secret.key).',
    );
  }
  return exit;
}

/**
 * 0 when the report is intact and signed by the trusted key; 1 when it is not (changed, its
 * signature invalid, or signed by another key); 3 when no trusted key was given; 2 for bad input.
 */
export async function casesVerify(file: string, opts: VerifyOptions): Promise<number> {
  const out = createOutput(Boolean(opts.json));
  try {
    if (!fs.existsSync(file) || !fs.statSync(file).isFile()) throw badRequest(`${file} is not a file`);
    const trusted = trustedKey(opts);
    const check = checkReport(fs.readFileSync(file, 'utf8'), trusted ?? undefined);
    if (!out.json) return printCheck(out, file, check, trusted, deploymentDir(opts.dataDir));
    printJson(out, { file, ...check, trustedKey: trusted });
    return verdict(check, trusted).exit;
  } catch (err) {
    return reportError(out, err);
  }
}
