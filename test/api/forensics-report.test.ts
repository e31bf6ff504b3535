import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReport, parseTrustedKey, publishedKey } from '../../src/report/signature.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { sampleCase, sampleEvidence, sampleReport } from '../helpers/evidence-case.js';
import { expectError } from '../helpers/expect-error.js';
import { addContent, registerOrg } from '../helpers/fixtures.js';

// GET /api/v1/forensics/cases/{id}/report: the case as one HTML document, under the same key,
// scope and organization rules as the case itself, sent so that a browser opening it runs and
// loads nothing; GET /api/v1/forensics/report-key: the key it is signed with, open to anyone.
// Cases are stored as analysis stores them (test/helpers/evidence-case.ts).

const XSS_TITLE = '<script>alert(1)</script>';

describe.each(DIALECTS)('the evidence report endpoint on %s', (dialect) => {
  let t: TestApp;
  let org: Awaited<ReturnType<typeof registerOrg>>;
  let other: Awaited<ReturnType<typeof registerOrg>>;
  const mine = randomUUID();
  const theirs = randomUUID();
  const outside = randomUUID();
  const report = (id: string, key: string | undefined) =>
    t.request('GET', `/api/v1/forensics/cases/${id}/report`, { key });

  beforeAll(async () => {
    t = await makeTestApp(dialect);
    // named apart from the organization the sample evidence names (Acme Films), which the asker must not see
    org = await registerOrg(t, { name: 'Asking Films', email: 'ops@asking.test' });
    other = await registerOrg(t, { name: 'Other Films', email: 'ops@other.test' });
    const content = await addContent(t, { title: XSS_TITLE });
    const store = (id: string, organizationId: string, viewerOrg: string) =>
      t.ctx.repos.forensicCases.insert(
        sampleCase({
          id,
          organizationId,
          contentId: content.id,
          report: sampleReport(sampleEvidence({ organizationId: viewerOrg, title: XSS_TITLE })),
        }),
      );
    await store(mine, org.organizationId, org.organizationId);
    await store(theirs, other.organizationId, other.organizationId);
    // A leak this organization uploaded whose best match is the other organization's viewer.
    await store(outside, org.organizationId, other.organizationId);
  });
  afterAll(() => t.close());

  it('answers the case as one inert HTML file to download', async () => {
    const res = await report(mine, org.apiKey);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(
      "default-src 'none'; img-src data:; style-src 'unsafe-inline'",
    );
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="case-${mine}.html"`);
    const page = await res.text();
    expect(page).toMatch(/^<!doctype html>/);
    expect(page).toContain(mine);
    expect(page).toContain('ab'.repeat(32));
    expect(page).toContain('Acme Films');
    expect(page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(page).not.toContain(XSS_TITLE);
  });

  it('publishes the key that signs its reports to anyone, without a key; that key verifies a report it signed', async () => {
    const res = await t.request('GET', '/api/v1/forensics/report-key');
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600');
    const published = await res.json();
    expect(published).toEqual(publishedKey(t.ctx.keys.reports.publicKey));
    const page = await (await report(mine, org.apiKey)).text();
    expect(page).toContain(published.fingerprint);
    const trusted = parseTrustedKey(JSON.stringify(published), 'the published key');
    expect(checkReport(page, trusted)).toMatchObject({ verified: true, intact: true });
  });

  it('refuses a request without a key (401) or without the forensics scope (403)', async () => {
    await expectError(await report(mine, undefined), 401, 'INVALID_API_KEY');
    await expectError(await report(mine, 'drm_live_not-a-key'), 401, 'INVALID_API_KEY');
    const streamer = await registerOrg(t, { name: 'Streamer', email: 'a@streamer.test', scopes: ['stream'] });
    await expectError(await report(mine, streamer.apiKey), 403, 'INSUFFICIENT_SCOPE');
  });

  it('answers an unknown case and another organization’s case alike: 404 in the error body', async () => {
    await expectError(await report(randomUUID(), org.apiKey), 404, 'NOT_FOUND');
    await expectError(await report('not-a-case', org.apiKey), 404, 'NOT_FOUND');
    await expectError(await report(theirs, org.apiKey), 404, 'NOT_FOUND');
    expect((await report(theirs, other.apiKey)).status).toBe(200);
  });

  it('names nobody of another organization in a case of one’s own that matched their viewer', async () => {
    const res = await report(outside, org.apiKey);
    expect(res.status).toBe(200);
    const page = await res.text();
    expect(page).toContain('another organization');
    expect(page).toMatch(/Asking Films \(organization <code>[0-9a-f-]{36}<\/code>\)/);
    for (const hidden of [
      'Acme Films',
      'alice',
      '203.0.113.7',
      'session-1',
      '0x1111111111111111111111111111111111111111',
    ])
      expect(page).not.toContain(hidden);
  });
});
