import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKey, loadServerSecret } from '../../src/crypto/secret.js';
import { visibleTo } from '../../src/present/forensics.js';
import { renderEvidenceReport } from '../../src/report/evidence-report.js';
import {
  keyFingerprint,
  publishedKey,
  type ReportSigner,
  reportSigner,
  SIGNATURE_SLOT,
  signReport,
} from '../../src/report/signature.js';
import { sampleCase, sampleEvidence, sampleReport } from '../helpers/evidence-case.js';
import { runDrm } from '../helpers/serve-process.js';

// `drm cases key` and `drm cases verify` on a report the deployment of a data directory signed, made
// up (test/helpers/evidence-case.ts) rather than analysed: its key comes from the data directory's
// secret as a server's does. A forger changes a figure and signs the file again with a key of their
// own, which the file then names: only a key the verifier trusts may call a report intact.

const T = 60_000;
let dir: string;
let dataDir: string;
let deployment: ReportSigner;
const file = (name: string) => path.join(dir, name);
/** Nothing to trust by default: no DRM_SECRET, and DRM_DATA_DIR where no deployment is. */
const verify = (args: string[]) =>
  runDrm(['cases', 'verify', ...args], { DRM_SECRET: '', DRM_DATA_DIR: file('nowhere') });

beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-verify-'));
  dataDir = file('data');
  deployment = reportSigner(deriveKey(loadServerSecret(dataDir, {}), 'evidence-report'));
  const row = sampleCase({
    id: 'case-1',
    organizationId: 'org-1',
    report: sampleReport(sampleEvidence({ organizationId: 'org-1' })),
  });
  const page = renderEvidenceReport({
    row,
    visible: visibleTo(row, 'operator'),
    content: { id: 'content-1', type: 'video', title: 'Pan' },
    generatedAt: 0,
    software: 'drm 9.9.9',
    signingKey: deployment.publicKey,
  });
  expect(page).toContain('3.2 × 10<sup>−14</sup>');
  fs.writeFileSync(file('case.html'), signReport(page, deployment));
  const changed = page.replace('3.2 × 10<sup>−14</sup>', '3.2 × 10<sup>−4</sup>');
  fs.writeFileSync(file('forged.html'), signReport(changed, reportSigner(randomBytes(32))));
  fs.writeFileSync(file('key.json'), JSON.stringify(publishedKey(deployment.publicKey)));
  fs.writeFileSync(file('key.hex'), `${deployment.publicKey}\n`);
  expect(fs.readFileSync(file('forged.html'), 'utf8')).not.toContain(SIGNATURE_SLOT);
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('drm cases key', () => {
  it(
    "prints the key the deployment signs reports with and its fingerprint, and refuses where there's no deployment",
    async () => {
      const [text, json, none] = await Promise.all([
        runDrm(['cases', 'key', '--data-dir', dataDir], { DRM_SECRET: '' }),
        runDrm(['cases', 'key', '--data-dir', dataDir, '--json'], { DRM_SECRET: '' }),
        runDrm(['cases', 'key', '--data-dir', file('nowhere')], { DRM_SECRET: '' }),
      ]);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toContain(`Ed25519 key  ${deployment.publicKey}`);
      expect(text.stdout).toContain(`fingerprint  ${keyFingerprint(deployment.publicKey)}`);
      expect(JSON.parse(json.stdout)).toEqual(publishedKey(deployment.publicKey));
      expect([none.code, none.stdout]).toEqual([2, '']);
      expect(none.stderr).toMatch(/^drm: no secret: set DRM_SECRET or point --data-dir at the data directory/);
      expect(fs.existsSync(file('nowhere'))).toBe(false);
    },
    T,
  );
});

describe('drm cases verify', () => {
  it(
    'refuses a report whose figure was changed and signed again with a foreign key, with or without a trusted key',
    async () => {
      const forged = file('forged.html');
      const [none, key, keyFile, data] = await Promise.all([
        verify([forged]),
        verify([forged, '--key', deployment.publicKey]),
        verify([forged, '--key-file', file('key.json'), '--json']),
        verify([forged, '--data-dir', dataDir]),
      ]);
      expect(none.code, none.stderr).toBe(3);
      expect(none.stdout).toMatch(/^\S+forged\.html: signature not verified: no trusted key\n/);
      expect(none.stdout).toMatch(/--key HEX .*--key-file FILE .*--data-dir/);
      expect(none.stdout).not.toMatch(/intact/i);
      for (const refused of [key, data]) {
        expect(refused.code, refused.stderr).toBe(1);
        expect(refused.stdout).toMatch(/forged\.html: NOT INTACT: not signed by the trusted key\n/);
        expect(refused.stdout).toContain(`(NOT the trusted key ${keyFingerprint(deployment.publicKey)}, `);
      }
      expect(keyFile.code, keyFile.stderr).toBe(1);
      expect(JSON.parse(keyFile.stdout)).toMatchObject({
        intact: false,
        verified: false,
        digestMatches: true,
        signatureValid: true,
        keyExpected: false,
        trustedKey: { publicKey: deployment.publicKey, fingerprint: keyFingerprint(deployment.publicKey) },
      });
    },
    T,
  );

  it(
    'passes the report as signed with each trusted key: --key (the key or its fingerprint), --key-file, --data-dir',
    async () => {
      const report = file('case.html');
      const runs = await Promise.all([
        verify([report, '--key', deployment.publicKey]),
        verify([report, '--key', keyFingerprint(deployment.publicKey)]),
        verify([report, '--key-file', file('key.hex')]),
        verify([report, '--data-dir', dataDir]),
      ]);
      for (const run of runs) {
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toMatch(/case\.html: intact and signed by the trusted key\n/);
      }
      const json = await verify([report, '--key-file', file('key.json'), '--json']);
      expect(json.code, json.stderr).toBe(0);
      expect(JSON.parse(json.stdout)).toMatchObject({ intact: true, verified: true, keyExpected: true });
    },
    T,
  );
});
