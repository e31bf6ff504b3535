import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../src/crypto/tokens.js';
import { LISTED_LICENSES } from '../../src/domain/admin/organizations.js';
import { adminToken } from '../helpers/admin.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { registerOrg } from '../helpers/fixtures.js';

// GET /admin/organizations shows each organization's licenses with their watermarking flag,
// at most LISTED_LICENSES of them (newest first); activeLicenses counts them all.
describe.each(DIALECTS)('licenses in the admin listing on %s', (dialect) => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
    token = await adminToken(t);
  });
  afterAll(() => t.close());

  const listed = async (id: string) => {
    const res = await t.request('GET', '/api/v1/admin/organizations?limit=100', { key: token });
    expect(res.status).toBe(200);
    const { organizations } = await res.json();
    return organizations.find((o: { id: string }) => o.id === id);
  };
  const grant = (organizationId: string, contentId: string, watermarkingEnabled: boolean, createdAt: number) =>
    t.ctx.repos.licenses.upsert({
      id: newId(),
      organizationId,
      contentId,
      contentType: 'video',
      licenseScope: contentId === '*' ? 'all' : 'specific',
      watermarkingEnabled,
      pricePerStreamMicro: 0,
      isActive: true,
      createdAt,
    });

  it('shows each license with its flag, at most LISTED_LICENSES per organization, newest first', async () => {
    const many = await registerOrg(t, { name: 'Many Licenses Co', email: 'ops@many.test' });
    const one = await registerOrg(t, { name: 'One License Co', email: 'ops@one.test' });
    const base = t.clock.now();
    // The oldest is unmarked: it is the one cut from the listing.
    for (let i = 0; i <= LISTED_LICENSES; i++) await grant(many.organizationId, newId(), i !== 0, base + i);
    await grant(one.organizationId, '*', false, base);

    const m = await listed(many.organizationId);
    expect(m.activeLicenses).toBe(LISTED_LICENSES + 1);
    expect(m.licenses).toHaveLength(LISTED_LICENSES);
    expect(m.licenses.every((l: { watermarkingEnabled: unknown }) => l.watermarkingEnabled === true)).toBe(true);
    const times = m.licenses.map((l: { createdAt: string }) => Date.parse(l.createdAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    expect((await listed(one.organizationId)).licenses).toEqual([
      {
        licenseId: expect.any(String),
        contentId: '*',
        contentType: 'video',
        licenseScope: 'all',
        watermarkingEnabled: false,
        pricePerStream: 0,
        createdAt: new Date(base).toISOString(),
      },
    ]);
  });
});
