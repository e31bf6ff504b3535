import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  checkReport,
  keyFingerprint,
  parseTrustedKey,
  publishedKey,
  reportSigner,
  SIGNATURE_SLOT,
  signReport,
} from '../../src/report/signature.js';
import { renderEvidenceReport } from '../../src/report/evidence-report.js';
import { visibleTo } from '../../src/present/forensics.js';
import { sampleCase, sampleEvidence, sampleReport } from '../helpers/evidence-case.js';

// An evidence report carries its own SHA-256 and the deployment's Ed25519 signature of it: a copy
// changed anywhere, or signed by another key, does not pass. Only a key the verifier trusts
// verifies a signature: the key a report names is whoever signed it's choice.

const signer = reportSigner(Buffer.alloc(32, 5));
const other = reportSigner(Buffer.alloc(32, 6));
const trusted = parseTrustedKey(signer.publicKey, '--key');

function page() {
  const row = sampleCase({
    id: 'case-1',
    organizationId: 'org-1',
    report: sampleReport(sampleEvidence({ organizationId: 'org-1' })),
  });
  return renderEvidenceReport({
    row,
    visible: visibleTo(row, 'operator'),
    content: { id: 'content-1', type: 'video', title: 'Pan' },
    generatedAt: 0,
    software: 'drm 9.9.9',
    signingKey: signer.publicKey,
    requestedBy: {
      organization: { id: 'org-1', name: 'Acme Films' },
      key: { name: 'investigations', prefix: 'drm_live_abc' },
    },
  });
}

describe('the evidence report’s signature', () => {
  it('is rendered with one empty slot, names the signing key with its fingerprint, and who asked', () => {
    const html = page();
    expect(html.split(SIGNATURE_SLOT)).toHaveLength(2);
    expect(html).toContain(`${signer.publicKey}</code> (fingerprint <code>${keyFingerprint(signer.publicKey)}</code>)`);
    expect(html).toContain(
      'Acme Films (organization <code>org-1</code>), with its API key “investigations” (<code>drm_live_abc…</code>)',
    );
  });

  it('verifies a signed report against the trusted key, given whole or as its fingerprint', () => {
    const signed = signReport(page(), signer);
    expect(signed).not.toContain(SIGNATURE_SLOT);
    const intact = {
      digestMatches: true,
      signatureValid: true,
      keyExpected: true,
      verified: true,
      intact: true,
      publicKey: signer.publicKey,
      fingerprint: keyFingerprint(signer.publicKey),
    };
    expect(checkReport(signed, trusted)).toMatchObject(intact);
    expect(checkReport(signed, parseTrustedKey(keyFingerprint(signer.publicKey), '--key'))).toMatchObject(intact);
  });

  it('verifies nothing without a trusted key: a valid signature is not an intact report', () => {
    expect(checkReport(signReport(page(), signer))).toMatchObject({
      digestMatches: true,
      signatureValid: true,
      keyExpected: null,
      verified: false,
      intact: false,
    });
  });

  it('fails a report whose figure was changed and signed again with a key of the forger’s own', () => {
    const forged = signReport(page().replace('Acme Films', 'Acme Filmz'), other);
    const check = checkReport(forged, trusted);
    expect(check).toMatchObject({ digestMatches: true, signatureValid: true, publicKey: other.publicKey });
    expect(check).toMatchObject({ keyExpected: false, verified: false, intact: false });
    expect(checkReport(forged, parseTrustedKey(keyFingerprint(signer.publicKey), '--key')).intact).toBe(false);
    expect(checkReport(forged).intact).toBe(false);
  });

  it('fails a report changed by one character, and a forged digest beside the old signature', () => {
    const signed = signReport(page(), signer);
    const changed = signed.replace('Acme Films', 'Acme Filmz');
    expect(checkReport(changed, trusted)).toMatchObject({ digestMatches: false, keyExpected: true, intact: false });
    // a forged block: the true digest of the changed file beside the old signature
    const block = /<!--drm-signature [^>]*-->/;
    const digest = createHash('sha256').update(changed.replace(block, SIGNATURE_SLOT)).digest('hex');
    const forged = changed.replace(/sha256="[0-9a-f]{64}"/, `sha256="${digest}"`);
    expect(checkReport(forged, trusted)).toMatchObject({ digestMatches: true, signatureValid: false, intact: false });
  });

  it('refuses a file that carries no signature', () => {
    expect(() => checkReport('<html></html>')).toThrow(/no drm evidence-report signature/);
  });
});

describe('the published report key', () => {
  it('has a fingerprint: the first 16 bytes of the SHA-256 of the raw key, in groups of four hex digits', () => {
    const sha = createHash('sha256').update(Buffer.from(signer.publicKey, 'hex')).digest('hex');
    expect(keyFingerprint(signer.publicKey)).toBe(sha.slice(0, 32).match(/.{4}/g)?.join(':'));
    expect(publishedKey(signer.publicKey)).toEqual({
      algorithm: 'Ed25519',
      publicKey: signer.publicKey,
      fingerprint: keyFingerprint(signer.publicKey),
    });
  });

  it('is trusted as the verifier writes it: the key, its fingerprint, or the JSON the deployment publishes', () => {
    const fingerprint = keyFingerprint(signer.publicKey);
    const whole = { publicKey: signer.publicKey, fingerprint };
    expect(parseTrustedKey(` ${signer.publicKey.toUpperCase()}\n`, '--key')).toEqual(whole);
    expect(parseTrustedKey(fingerprint, '--key')).toEqual({ publicKey: null, fingerprint });
    expect(parseTrustedKey(fingerprint.replace(/:/g, ''), '--key')).toEqual({ publicKey: null, fingerprint });
    expect(parseTrustedKey(JSON.stringify(publishedKey(signer.publicKey)), 'key.json')).toEqual(whole);
  });

  it('refuses what is no key, and published JSON whose fingerprint is not its key’s', () => {
    expect(() => parseTrustedKey('abc', '--key')).toThrow(/--key must be the deployment's Ed25519 public key/);
    const mixed = { ...publishedKey(signer.publicKey), fingerprint: keyFingerprint(other.publicKey) };
    expect(() => parseTrustedKey(JSON.stringify(mixed), 'key.json')).toThrow(/not the one of its publicKey/);
    expect(() => parseTrustedKey('{"publicKey": "zz"}', 'key.json')).toThrow(/no publicKey of 64 hex/);
    expect(() => parseTrustedKey('{nope', 'key.json')).toThrow(/not valid JSON/);
  });
});
