import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkReport, reportSigner, SIGNATURE_SLOT, signReport } from '../../src/report/signature.js';
import { renderEvidenceReport } from '../../src/report/evidence-report.js';
import { visibleTo } from '../../src/present/forensics.js';
import { sampleCase, sampleEvidence, sampleReport } from '../helpers/evidence-case.js';

// An evidence report carries its own SHA-256 and the deployment's Ed25519 signature of it: a copy
// changed anywhere, or signed by another deployment, does not pass.

const signer = reportSigner(Buffer.alloc(32, 5));
const other = reportSigner(Buffer.alloc(32, 6));

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
  it('is rendered with one empty slot, names the signing key and who asked', () => {
    const html = page();
    expect(html.split(SIGNATURE_SLOT)).toHaveLength(2);
    expect(html).toContain(signer.publicKey);
    expect(html).toContain(
      'Acme Films (organization <code>org-1</code>), with its API key “investigations” (<code>drm_live_abc…</code>)',
    );
  });

  it('verifies a signed report: the digest matches the file and the signature the deployment’s key', () => {
    const signed = signReport(page(), signer);
    expect(signed).not.toContain(SIGNATURE_SLOT);
    expect(checkReport(signed, signer.publicKey)).toMatchObject({
      digestMatches: true,
      signatureValid: true,
      keyExpected: true,
      publicKey: signer.publicKey,
    });
  });

  it('fails a report changed by one character, and one signed by another deployment', () => {
    const signed = signReport(page(), signer);
    const changed = signed.replace('Acme Films', 'Acme Filmz');
    expect(checkReport(changed, signer.publicKey)).toMatchObject({ digestMatches: false, keyExpected: true });
    const elsewhere = signReport(page(), other);
    expect(checkReport(elsewhere, signer.publicKey)).toMatchObject({
      digestMatches: true,
      signatureValid: true,
      keyExpected: false,
    });
    // a forged block: the true digest of the changed file beside the old signature
    const block = /<!--drm-signature [^>]*-->/;
    const digest = createHash('sha256').update(changed.replace(block, SIGNATURE_SLOT)).digest('hex');
    const forged = changed.replace(/sha256="[0-9a-f]{64}"/, `sha256="${digest}"`);
    expect(checkReport(forged, signer.publicKey).digestMatches).toBe(true);
    expect(checkReport(forged, signer.publicKey).signatureValid).toBe(false);
  });

  it('refuses a file that carries no signature', () => {
    expect(() => checkReport('<html></html>')).toThrow(/no drm evidence-report signature/);
  });
});
