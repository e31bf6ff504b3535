import { createHash, createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { badRequest, DrmError } from '../errors.js';

/**
 * An evidence report signs itself: the deployment's Ed25519 key (derived from the server secret,
 * so every server and worker of a deployment signs alike) signs the SHA-256 of the document as
 * rendered with its signature block empty. The block then carries the digest, the signature and
 * the public key. Anyone can recompute the digest over the file with the block emptied again and
 * check the signature: `drm cases verify case.html`, or any Ed25519 tool. Changing one byte of the
 * report outside the block breaks both.
 *
 * A valid signature alone proves nothing: whoever changes a report can sign it again with a key of
 * their own and put that key in the block. So the deployment publishes its key (GET
 * /api/v1/forensics/report-key, `drm cases key`), and a report is intact only when it is signed by
 * a key the verifier trusts, never by the key it names itself.
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

/**
 * A key's fingerprint, printed in every report and published with the key: the first 16 bytes of
 * the SHA-256 of the raw 32-byte public key, hex, in eight groups of four joined by colons. Short
 * enough to read out or quote in a filing; at 128 bits, making another key with the same
 * fingerprint is a second preimage of SHA-256 cut to 128 bits, so a verifier may trust it as the key.
 */
export function keyFingerprint(publicKey: string): string {
  return inGroups(createHash('sha256').update(Buffer.from(publicKey, 'hex')).digest('hex').slice(0, 32));
}

function inGroups(hex: string): string {
  return (hex.match(/.{4}/g) ?? []).join(':');
}

/** What the deployment publishes of its report key (the endpoint and `drm cases key --json` alike). */
export interface PublishedKey {
  algorithm: 'Ed25519';
  /** the raw 32-byte public key, hex */
  publicKey: string;
  fingerprint: string;
}

export const publishedKey = (publicKey: string): PublishedKey => ({
  algorithm: 'Ed25519',
  publicKey,
  fingerprint: keyFingerprint(publicKey),
});

/** The key a verifier trusts: the public key, or only its fingerprint (then publicKey is null). */
export interface TrustedKey {
  publicKey: string | null;
  fingerprint: string;
}

/**
 * A trusted key as a verifier writes it: the public key (64 hex characters), its fingerprint (32,
 * colons, dashes or spaces between groups allowed), or the JSON the deployment publishes
 * (PublishedKey). `where` names the source in a refusal (--key, a file).
 */
export function parseTrustedKey(text: string, where: string): TrustedKey {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) return publishedJson(trimmed, where);
  const hex = trimmed.replace(/[\s:-]/g, '').toLowerCase();
  if (/^[0-9a-f]{64}$/.test(hex)) return { publicKey: hex, fingerprint: keyFingerprint(hex) };
  if (/^[0-9a-f]{32}$/.test(hex)) return { publicKey: null, fingerprint: inGroups(hex) };
  throw badRequest(
    `${where} must be the deployment's Ed25519 public key (64 hex characters), its fingerprint ` +
      '(32 hex characters) or the JSON drm cases key --json prints',
  );
}

function publishedJson(text: string, where: string): TrustedKey {
  let published: Partial<Record<keyof PublishedKey, unknown>>;
  try {
    published = JSON.parse(text);
  } catch {
    throw badRequest(`${where} is not valid JSON`);
  }
  const { algorithm, publicKey, fingerprint } = published ?? {};
  if (algorithm !== undefined && algorithm !== 'Ed25519') throw badRequest(`${where} names a key that is not Ed25519`);
  if (typeof publicKey !== 'string' || !/^[0-9a-fA-F]{64}$/.test(publicKey))
    throw badRequest(`${where} holds no publicKey of 64 hex characters`);
  const key = publicKey.toLowerCase();
  // a fingerprint beside the key that is not the key's own: the file was changed or mixed up
  if (fingerprint !== undefined && fingerprint !== keyFingerprint(key))
    throw badRequest(`${where}: its fingerprint is not the one of its publicKey`);
  return { publicKey: key, fingerprint: keyFingerprint(key) };
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
  /** the public key the block names, hex: whoever signed the file chose it */
  publicKey: string;
  /** that key's fingerprint */
  fingerprint: string;
  /** whether that key is the trusted one (null: no trusted key was given) */
  keyExpected: boolean | null;
  /** whether the signature is valid and made by the trusted key */
  verified: boolean;
  /** whether the file is the one the trusted key signed: the digest matches and the signature is verified */
  intact: boolean;
}

/** Checks a signed report against the key the verifier trusts, when one is given. */
export function checkReport(document: string, trusted?: TrustedKey): ReportCheck {
  const found = BLOCK.exec(document);
  if (!found) throw new DrmError('BAD_REQUEST', 'the file carries no drm evidence-report signature');
  const [block, sha256, signature, publicKey] = found as unknown as [string, string, string, string];
  const digest = digestOf(document.replace(block, SIGNATURE_SLOT));
  const key = createPublicKey({
    key: Buffer.concat([SPKI_PREFIX, Buffer.from(publicKey, 'hex')]),
    format: 'der',
    type: 'spki',
  });
  const digestMatches = digest.toString('hex') === sha256;
  const signatureValid = verify(null, Buffer.from(sha256, 'hex'), key, Buffer.from(signature, 'hex'));
  const fingerprint = keyFingerprint(publicKey);
  const keyExpected =
    trusted === undefined
      ? null
      : trusted.publicKey === null
        ? trusted.fingerprint === fingerprint
        : trusted.publicKey === publicKey;
  const verified = signatureValid && keyExpected === true;
  return {
    sha256,
    digestMatches,
    signatureValid,
    publicKey,
    fingerprint,
    keyExpected,
    verified,
    intact: digestMatches && verified,
  };
}
