import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { DrmError } from '../errors.js';

/**
 * An evidence report signs itself: the deployment's Ed25519 key (derived from the server secret,
 * so every server and worker of a deployment signs alike) signs the SHA-256 of the document as
 * rendered with its signature block empty. The block then carries the digest, the signature and
 * the public key. Anyone can recompute the digest over the file with the block emptied again and
 * check the signature: `drm cases verify case.html`, or any Ed25519 tool. Changing one byte of the
 * report outside the block breaks both.
 */

/** The empty block a report is rendered with; the signed report carries its filled twin in its place. */
export const SIGNATURE_SLOT = '<!--drm-signature-->';
const BLOCK = /<!--drm-signature sha256="([0-9a-f]{64})" ed25519="([0-9a-f]{128})" key="([0-9a-f]{64})"-->/;

/** PKCS#8 and SPKI wrappings of a raw Ed25519 key (RFC 8410): Node takes keys in these forms. */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

export interface ReportSigner {
  privateKey: KeyObject;
  /** the raw 32-byte public key, hex */
  publicKey: string;
}

/** The deployment's signing key from a 32-byte seed (deriveKey(secret, 'evidence-report')). */
export function reportSigner(seed: Buffer): ReportSigner {
  const privateKey = createPrivateKey({
    key: Buffer.concat([PKCS8_PREFIX, seed.subarray(0, 32)]),
    format: 'der',
    type: 'pkcs8',
  });
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  return { privateKey, publicKey: spki.subarray(SPKI_PREFIX.length).toString('hex') };
}

const digestOf = (document: string) => createHash('sha256').update(document, 'utf8').digest();

/** The report with its slot filled: `document` must hold SIGNATURE_SLOT once. */
export function signReport(document: string, signer: ReportSigner): string {
  if (document.split(SIGNATURE_SLOT).length !== 2)
    throw new Error('a report to sign holds its signature slot exactly once');
  const digest = digestOf(document);
  const signature = sign(null, digest, signer.privateKey).toString('hex');
  return document.replace(
    SIGNATURE_SLOT,
    `<!--drm-signature sha256="${digest.toString('hex')}" ed25519="${signature}" key="${signer.publicKey}"-->`,
  );
}

export interface ReportCheck {
  /** the SHA-256 the block states, of the report with its block emptied */
  sha256: string;
  /** whether the file, its block emptied, hashes to that */
  digestMatches: boolean;
  /** whether the signature over that digest verifies with the key the block names */
  signatureValid: boolean;
  /** the public key the block names, hex: compare it with the deployment's */
  publicKey: string;
  /** whether that key is the one expected (when one was given) */
  keyExpected: boolean | null;
}

/** Checks a signed report; `expectedKey` is the deployment's public key (hex), when known. */
export function checkReport(document: string, expectedKey?: string): ReportCheck {
  const found = BLOCK.exec(document);
  if (!found) throw new DrmError('BAD_REQUEST', 'the file carries no drm evidence-report signature');
  const [block, sha256, signature, publicKey] = found as unknown as [string, string, string, string];
  const digest = digestOf(document.replace(block, SIGNATURE_SLOT));
  const key = createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, Buffer.from(publicKey, 'hex')]),
    format: 'der',
    type: 'spki',
  });
  return {
    sha256,
    digestMatches: digest.toString('hex') === sha256,
    signatureValid: verify(null, Buffer.from(sha256, 'hex'), key, Buffer.from(signature, 'hex')),
    publicKey,
    keyExpected: expectedKey === undefined ? null : expectedKey.toLowerCase() === publicKey,
  };
}
