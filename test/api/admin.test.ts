import Sqlite from 'better-sqlite3';
import pg from 'pg';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { newId } from '../../src/crypto/tokens.js';
import { adminToken, newAccount, siweMessage, verifySignIn } from '../helpers/admin.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { addContent, registerOrg } from '../helpers/fixtures.js';
import { expectError } from '../helpers/expect-error.js';

const HOUR = 3_600_000;

/** Stream sessions stand in for streaming until it exists: a viewer and a session written straight into the tables. */
async function insertSession(t: TestApp, organizationId: string, createdAt: number) {
  const viewerId = newId();
  const binaryId = Array.from({ length: 40 }, () => (Math.random() < 0.5 ? '0' : '1')).join('');
  const viewer = [viewerId, organizationId, newId(), binaryId, `0x${'ab'.repeat(20)}`, createdAt];
  const session = [newId(), organizationId, newId(), newId(), viewerId, createdAt + HOUR, createdAt];
  const viewerSql = `insert into viewers (id, organization_id, external_viewer_id, binary_id, wallet_address,
    has_own_wallet, total_streams, is_blocked, first_seen, last_seen)`;
  const sessionSql = `insert into stream_sessions (id, organization_id, api_key_id, content_id, viewer_id,
    is_active, bytes_served, expires_at, created_at)`;
  if (t.ctx.config.db.startsWith('sqlite:')) {
    const db = new Sqlite(t.ctx.config.db.slice('sqlite:'.length));
    db.pragma('busy_timeout = 5000');
    try {
      db.prepare(`${viewerSql} values (?, ?, ?, ?, ?, 0, 1, 0, ?, ?)`).run(...viewer, createdAt);
      db.prepare(`${sessionSql} values (?, ?, ?, ?, ?, 1, 0, ?, ?)`).run(...session);
    } finally {
      db.close();
    }
    return;
  }
  const client = new pg.Client({ connectionString: t.ctx.config.db });
  await client.connect();
  try {
    await client.query(`${viewerSql} values ($1, $2, $3, $4, $5, false, 1, false, $6, $6)`, viewer);
    await client.query(`${sessionSql} values ($1, $2, $3, $4, $5, true, 0, $6, $7)`, session);
  } finally {
    await client.end();
  }
}

describe.each(DIALECTS)('admin sign-in on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
  });
  afterAll(() => t.close());

  const listOrgs = (token: string) => t.request('GET', '/api/v1/admin/organizations', { key: token });

  it('hands out a nonce that is valid for 10 minutes', async () => {
    const res = await t.request('GET', '/api/v1/admin/auth/nonce');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.nonce).toMatch(/^[0-9A-Za-z]{8,}$/);
    expect(body.expiresAt).toBe(new Date(t.clock.now() + 10 * 60_000).toISOString());
  });

  it('signs a granted wallet in and returns {token, address, expiresAt} good for the admin endpoints', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const res = await verifySignIn(t, await siweMessage(t, account), account);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual(['address', 'expiresAt', 'token']);
    expect(body.address).toBe(account.address);
    expect(body.expiresAt).toBe(new Date(t.clock.now() + 12 * HOUR).toISOString());
    expect(body.token.split('.')).toHaveLength(3);
    expect((await listOrgs(body.token)).status).toBe(200);
  });

  it('adminToken() grants a fresh wallet and yields a working token', async () => {
    const token = await adminToken(t);
    expect((await listOrgs(token)).status).toBe(200);
  });

  it('a nonce is single-use: the same signed message a second time is refused', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const message = await siweMessage(t, account);
    expect((await verifySignIn(t, message, account)).status).toBe(200);
    await expectError(await verifySignIn(t, message, account), 401, 'INVALID_ADMIN_TOKEN');
  });

  it('a nonce the server never issued is refused', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const message = await siweMessage(t, account, { nonce: 'madeUpNonce12345' });
    await expectError(await verifySignIn(t, message, account), 401, 'INVALID_ADMIN_TOKEN');
  });

  it('a nonce expires 10 minutes after it was issued', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const early = await siweMessage(t, account);
    const late = await siweMessage(t, account);
    t.clock.advance(10 * 60_000 - 1_000);
    expect((await verifySignIn(t, early, account)).status).toBe(200);
    t.clock.advance(1_000);
    await expectError(await verifySignIn(t, late, account), 401, 'INVALID_ADMIN_TOKEN');
  });

  it('a failed signature does not use up the nonce', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const message = await siweMessage(t, account);
    await expectError(await verifySignIn(t, message, newAccount()), 401, 'INVALID_ADMIN_TOKEN');
    expect((await verifySignIn(t, message, account)).status).toBe(200);
  });

  it('the message domain must be the host the server is reached at', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const message = await siweMessage(t, account, { domain: 'evil.example', uri: 'https://evil.example' });
    await expectError(await verifySignIn(t, message, account), 401, 'INVALID_ADMIN_TOKEN');
  });

  it('an expirationTime in the past is refused, one in the future accepted', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const expired = await siweMessage(t, account, { expirationTime: new Date(t.clock.now() - 1_000) });
    await expectError(await verifySignIn(t, expired, account), 401, 'INVALID_ADMIN_TOKEN');
    const fresh = await siweMessage(t, account, { expirationTime: new Date(t.clock.now() + 60_000) });
    expect((await verifySignIn(t, fresh, account)).status).toBe(200);
  });

  it('an unparseable expirationTime or notBefore is a bad request, not a message without one', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    for (const field of ['Expiration Time', 'Not Before']) {
      const valid = await siweMessage(t, account, {
        expirationTime: new Date(t.clock.now() + 60_000),
        notBefore: new Date(t.clock.now() - 60_000),
      });
      const broken = valid.replace(new RegExp(`${field}: .*`), `${field}: 2020-13-45T99:99:99Z`);
      expect(broken).not.toBe(valid);
      await expectError(await verifySignIn(t, broken, account), 400, 'BAD_REQUEST');
    }
  });

  it('a notBefore in the future is refused', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const message = await siweMessage(t, account, { notBefore: new Date(t.clock.now() + 60_000) });
    await expectError(await verifySignIn(t, message, account), 401, 'INVALID_ADMIN_TOKEN');
  });

  it('an issuedAt more than 5 minutes ahead of the server is refused; 4 minutes of clock drift is accepted', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const ahead = await siweMessage(t, account, { issuedAt: new Date(t.clock.now() + 5 * 60_000 + 1000) });
    await expectError(await verifySignIn(t, ahead, account), 401, 'INVALID_ADMIN_TOKEN');
    const drifted = await siweMessage(t, account, { issuedAt: new Date(t.clock.now() + 4 * 60_000) });
    expect((await verifySignIn(t, drifted, account)).status).toBe(200);
  });

  it('a message without Issued At (EIP-4361 requires it) is refused, so the check above cannot be skipped', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const valid = await siweMessage(t, account);
    const undated = valid.replace(/\nIssued At: .*/, '');
    expect(undated).not.toBe(valid);
    await expectError(await verifySignIn(t, undated, account), 400, 'BAD_REQUEST');
    expect((await verifySignIn(t, valid, account)).status).toBe(200);
  });

  it('a signature by another key than the message address is refused', async () => {
    const account = newAccount();
    const other = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    await t.ctx.repos.admins.grant(other.address.toLowerCase(), t.clock.now());
    const message = await siweMessage(t, account);
    await expectError(await verifySignIn(t, message, other), 401, 'INVALID_ADMIN_TOKEN');
  });

  it('a message that is not EIP-4361, or a missing signature, is a bad request', async () => {
    const account = newAccount();
    const bad = await t.request('POST', '/api/v1/admin/auth/verify', {
      body: { message: 'hello', signature: await account.signMessage({ message: 'hello' }) },
    });
    await expectError(bad, 400, 'BAD_REQUEST');
    const missing = await t.request('POST', '/api/v1/admin/auth/verify', {
      body: { message: await siweMessage(t, account) },
    });
    await expectError(missing, 400, 'BAD_REQUEST');
    await expectError(await t.request('POST', '/api/v1/admin/auth/verify', { body: '{nope' }), 400, 'BAD_REQUEST');
  });

  it('a wallet that was never granted gets ADMIN_REQUIRED', async () => {
    const account = newAccount();
    await expectError(await verifySignIn(t, await siweMessage(t, account), account), 403, 'ADMIN_REQUIRED');
  });

  it('a token expires 12 hours after sign-in', async () => {
    const token = await adminToken(t);
    t.clock.advance(12 * HOUR - 60_000);
    expect((await listOrgs(token)).status).toBe(200);
    t.clock.advance(61_000);
    await expectError(await listOrgs(token), 401, 'INVALID_ADMIN_TOKEN');
  });

  it('a token stops working as soon as its wallet is revoked', async () => {
    const account = newAccount();
    const token = await adminToken(t, account);
    expect((await listOrgs(token)).status).toBe(200);
    expect(await t.ctx.repos.admins.revoke(account.address.toLowerCase())).toBe(true);
    await expectError(await listOrgs(token), 403, 'ADMIN_REQUIRED');
  });

  it('no bearer, an API key or a garbage token as bearer gives INVALID_ADMIN_TOKEN', async () => {
    const reg = await registerOrg(t);
    for (const key of [undefined, reg.apiKey, 'garbage', 'a.b.c']) {
      await expectError(await listOrgs(key as string), 401, 'INVALID_ADMIN_TOKEN');
    }
    const res = await t.request('POST', `/api/v1/admin/organizations/${reg.organizationId}/suspend`, {
      key: reg.apiKey,
      body: { reason: 'x' },
    });
    await expectError(res, 401, 'INVALID_ADMIN_TOKEN');
  });

  it('a token signed with another server secret is refused', async () => {
    const other = await makeTestApp(dialect);
    try {
      const foreign = await adminToken(other);
      await expectError(await listOrgs(foreign), 401, 'INVALID_ADMIN_TOKEN');
    } finally {
      await other.close();
    }
  });

  it('a token signed with the server secret but without exp, or living longer than 12 hours, is refused', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const iat = Math.floor(t.clock.now() / 1000);
    const forge = (lifetime: number | null, issuedAt: number | null = iat) => {
      const jwt = new SignJWT({ role: 'admin' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(account.address.toLowerCase())
        .setIssuer('drm')
        .setAudience('drm-admin');
      if (issuedAt !== null) jwt.setIssuedAt(issuedAt);
      if (lifetime !== null) jwt.setExpirationTime((issuedAt ?? iat) + lifetime);
      return jwt.sign(t.ctx.keys.adminToken);
    };
    expect((await listOrgs(await forge(12 * 3600))).status).toBe(200);
    await expectError(await listOrgs(await forge(null)), 401, 'INVALID_ADMIN_TOKEN');
    await expectError(await listOrgs(await forge(12 * 3600 + 1)), 401, 'INVALID_ADMIN_TOKEN');
    await expectError(await listOrgs(await forge(365 * 86400)), 401, 'INVALID_ADMIN_TOKEN');
    await expectError(await listOrgs(await forge(3600, null)), 401, 'INVALID_ADMIN_TOKEN');
  });

  it('a token dated ahead is refused: an iat a year away with a 1-hour exp after it would work for a year', async () => {
    const account = newAccount();
    await t.ctx.repos.admins.grant(account.address.toLowerCase(), t.clock.now());
    const now = Math.floor(t.clock.now() / 1000);
    const forge = (iat: number) =>
      new SignJWT({ role: 'admin' })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(account.address.toLowerCase())
        .setIssuer('drm')
        .setAudience('drm-admin')
        .setIssuedAt(iat)
        .setExpirationTime(iat + 3600)
        .sign(t.ctx.keys.adminToken);
    await expectError(await listOrgs(await forge(now + 365 * 86400)), 401, 'INVALID_ADMIN_TOKEN');
    await expectError(await listOrgs(await forge(now + 3600)), 401, 'INVALID_ADMIN_TOKEN');
    // Another server of the deployment may run a few seconds ahead of this one.
    expect((await listOrgs(await forge(now + 30))).status).toBe(200);
  });

  it('with --public-url the message must name that host instead of the Host header', async () => {
    const pub = await makeTestApp(dialect, { config: { publicUrl: 'https://drm.example.com' } });
    try {
      const account = newAccount();
      await pub.ctx.repos.admins.grant(account.address.toLowerCase(), pub.clock.now());
      const local = await siweMessage(pub, account);
      await expectError(await verifySignIn(pub, local, account), 401, 'INVALID_ADMIN_TOKEN');
      const message = await siweMessage(pub, account, { domain: 'drm.example.com', uri: 'https://drm.example.com' });
      const res = await verifySignIn(pub, message, account);
      expect(res.status).toBe(200);
      expect((await res.json()).address).toBe(account.address);
    } finally {
      await pub.close();
    }
  });

  it('wallets in DRM_ADMIN_WALLETS sign in without a grant', async () => {
    const account = newAccount();
    const other = newAccount();
    // As an operator writes it: checksummed, with spaces after the comma.
    const { adminWallets } = resolveConfig({}, { DRM_ADMIN_WALLETS: `${other.address}, ${account.address}` });
    const env = await makeTestApp(dialect, { config: { adminWallets } });
    try {
      const res = await verifySignIn(env, await siweMessage(env, account), account);
      expect(res.status).toBe(200);
      const { token } = await res.json();
      expect((await env.request('GET', '/api/v1/admin/organizations', { key: token })).status).toBe(200);
      expect(await env.ctx.repos.admins.isGranted(account.address.toLowerCase())).toBe(false);
    } finally {
      await env.close();
    }
  });
});

describe.each(DIALECTS)('admin organizations on %s', (dialect) => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
    token = await adminToken(t);
  });
  afterAll(() => t.close());

  const admin = (method: string, path: string, body?: unknown) =>
    t.request(method, `/api/v1/admin${path}`, { key: token, body });
  const orgRow = async (id: string) => {
    const res = await admin('GET', '/organizations?limit=500');
    expect(res.status).toBe(200);
    const { organizations } = await res.json();
    return organizations.find((o: { id: string }) => o.id === id);
  };

  it('lists organizations with streams this month, balance, keys (revoked not counted), licenses and isActive', async () => {
    const reg = await registerOrg(t, { name: 'Counted Co', email: 'c@counted.test' });
    const other = await registerOrg(t, { name: 'Other Co' });
    const video = await addContent(t);
    const song = await addContent(t, { type: 'music', resolution: null });
    for (const [contentId, contentType] of [
      [video.id, 'video'],
      [song.id, 'music'],
    ]) {
      const res = await admin('POST', `/organizations/${reg.organizationId}/license`, {
        contentId,
        contentType,
        watermarkingEnabled: contentType === 'video',
      });
      expect(res.status).toBe(200);
    }
    await t.ctx.repos.organizations.update(reg.organizationId, { apusdBalanceMicro: 12_340_000 });
    expect((await t.request('POST', '/api/v1/auth/rotate', { key: reg.apiKey })).status).toBe(200);
    const now = t.clock.now();
    const monthStart = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), 1);
    await insertSession(t, reg.organizationId, now - 1_000);
    await insertSession(t, reg.organizationId, monthStart);
    await insertSession(t, reg.organizationId, monthStart - 1); // last month
    await insertSession(t, other.organizationId, now - 1_000);

    const row = await orgRow(reg.organizationId);
    expect(row).toMatchObject({
      id: reg.organizationId,
      name: 'Counted Co',
      email: 'c@counted.test',
      plan: expect.any(String),
      isActive: true,
      streamsThisMonth: 2,
      apusdBalance: 12.34,
      totalApiKeys: 1,
      activeLicenses: 2,
    });
    // Each license shows with its watermarking flag.
    expect(row.licenses).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          contentId: video.id,
          contentType: 'video',
          licenseScope: 'specific',
          watermarkingEnabled: true,
          pricePerStream: 0,
        }),
        expect.objectContaining({ contentId: song.id, contentType: 'music', watermarkingEnabled: false }),
      ]),
    );
    expect(row.licenses).toHaveLength(2);
    expect(await orgRow(other.organizationId)).toMatchObject({ licenses: [] });
    expect(await orgRow(other.organizationId)).toMatchObject({
      streamsThisMonth: 1,
      apusdBalance: 0,
      totalApiKeys: 1,
      activeLicenses: 0,
      isActive: true,
    });
  });

  it('pages the organization list and refuses a bad page size', async () => {
    await registerOrg(t);
    await registerOrg(t);
    const res = await admin('GET', '/organizations?limit=1&page=2');
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.organizations).toHaveLength(1);
    expect(body).toMatchObject({ page: 2, limit: 1 });
    await expectError(await admin('GET', '/organizations?limit=0'), 400, 'BAD_REQUEST');
    await expectError(await admin('GET', '/organizations?limit=501'), 400, 'BAD_REQUEST');
  });

  it('licenses one content item, which the catalog then lists', async () => {
    const reg = await registerOrg(t);
    const item = await addContent(t, { title: 'Licensed Film' });
    const res = await admin('POST', `/organizations/${reg.organizationId}/license`, {
      contentId: item.id,
      contentType: 'video',
      licenseScope: 'specific',
      watermarkingEnabled: true,
      pricePerStream: 0.25,
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toEqual({ success: true, licenseId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    const lic = await t.ctx.repos.licenses.findFor(reg.organizationId, item.id, 'video');
    expect(lic).toMatchObject({
      id: body.licenseId,
      licenseScope: 'specific',
      watermarkingEnabled: true,
      pricePerStreamMicro: 250_000,
    });
    const catalog = await (await t.request('GET', '/api/v1/catalog', { key: reg.apiKey })).json();
    expect(catalog.content.map((c: { id: string }) => c.id)).toContain(item.id);
  });

  it('a specific license needs existing content of the stated type', async () => {
    const reg = await registerOrg(t);
    const song = await addContent(t, { type: 'music', resolution: null });
    const path = `/organizations/${reg.organizationId}/license`;
    await expectError(await admin('POST', path, { contentId: newId(), contentType: 'video' }), 404, 'NOT_FOUND');
    await expectError(await admin('POST', path, { contentId: song.id, contentType: 'video' }), 400, 'BAD_REQUEST');
    await expectError(await admin('POST', path, { contentId: 'not-a-uuid', contentType: 'video' }), 400, 'BAD_REQUEST');
    await expectError(await admin('POST', path, { contentId: song.id, contentType: 'film' }), 400, 'BAD_REQUEST');
    await expectError(await admin('POST', path, { contentType: 'music' }), 400, 'BAD_REQUEST');
    await expectError(
      await admin('POST', path, { contentId: song.id, contentType: 'music', pricePerStream: -1 }),
      400,
      'BAD_REQUEST',
    );
    // 1e-9 APUSD would be stored as 0 micro-APUSD, which means "the plan's price"
    const tiny = await admin('POST', path, { contentId: song.id, contentType: 'music', pricePerStream: 1e-9 });
    expect(tiny.status).toBe(400);
    expect(await tiny.json()).toMatchObject({ code: 'BAD_REQUEST', error: 'pricePerStream has more than 6 decimals' });
    await expectError(
      await admin('POST', path, { contentId: song.id, contentType: 'music', watermarkingEnabled: 'yes' }),
      400,
      'BAD_REQUEST',
    );
    expect((await admin('POST', path, { contentId: song.id, contentType: 'music' })).status).toBe(200);
  });

  it("licenses all content of a type with '*' and licenseScope all; an inconsistent scope is refused", async () => {
    const reg = await registerOrg(t);
    const item = await addContent(t);
    const path = `/organizations/${reg.organizationId}/license`;
    await expectError(
      await admin('POST', path, { contentId: '*', contentType: 'video', licenseScope: 'specific' }),
      400,
      'BAD_REQUEST',
    );
    await expectError(
      await admin('POST', path, { contentId: item.id, contentType: 'video', licenseScope: 'all' }),
      400,
      'BAD_REQUEST',
    );
    await expectError(
      await admin('POST', path, { contentId: '*', contentType: 'video', licenseScope: 'some' }),
      400,
      'BAD_REQUEST',
    );
    const res = await admin('POST', path, { contentId: '*', contentType: 'video', licenseScope: 'all' });
    expect(res.status).toBe(200);
    const { licenseId } = await res.json();
    const lic = await t.ctx.repos.licenses.findFor(reg.organizationId, item.id, 'video');
    expect(lic).toMatchObject({ id: licenseId, contentId: '*', licenseScope: 'all' });
    expect(await t.ctx.repos.licenses.findFor(reg.organizationId, item.id, 'music')).toBeUndefined();
  });

  it('granting the same license again keeps its licenseId and updates its fields', async () => {
    const reg = await registerOrg(t);
    const path = `/organizations/${reg.organizationId}/license`;
    const first = await (await admin('POST', path, { contentId: '*', contentType: 'music', pricePerStream: 1 })).json();
    const again = await admin('POST', path, {
      contentId: '*',
      contentType: 'music',
      licenseScope: 'all',
      watermarkingEnabled: true,
      pricePerStream: 2.5,
    });
    expect(again.status).toBe(200);
    expect((await again.json()).licenseId).toBe(first.licenseId);
    const lic = await t.ctx.repos.licenses.findFor(reg.organizationId, newId(), 'music');
    expect(lic).toMatchObject({ id: first.licenseId, watermarkingEnabled: true, pricePerStreamMicro: 2_500_000 });
    expect(await t.ctx.repos.licenses.countActive(reg.organizationId)).toBe(1);
    expect((await orgRow(reg.organizationId)).activeLicenses).toBe(1);
  });

  it('an unknown organization is NOT_FOUND for license, rate-limit, suspend and reactivate', async () => {
    for (const id of [newId(), 'not-a-uuid']) {
      const base = `/organizations/${id}`;
      await expectError(
        await admin('POST', `${base}/license`, { contentId: '*', contentType: 'video' }),
        404,
        'NOT_FOUND',
      );
      await expectError(await admin('POST', `${base}/rate-limit`, { rateLimitPerHour: 5 }), 404, 'NOT_FOUND');
      await expectError(await admin('POST', `${base}/suspend`, { reason: 'x' }), 404, 'NOT_FOUND');
      await expectError(await admin('POST', `${base}/reactivate`), 404, 'NOT_FOUND');
    }
  });

  it('sets organization-wide limits, visible in verify and enforced', async () => {
    const reg = await registerOrg(t);
    const res = await admin('POST', `/organizations/${reg.organizationId}/rate-limit`, {
      rateLimitPerHour: 3,
      monthlyStreamLimit: 10,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true });

    const verify = await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey });
    expect(verify.status).toBe(200);
    expect((await verify.json()).rateLimits).toMatchObject({ perHour: 3, remaining: 2, monthlyStreamLimit: 10 });
    expect(verify.headers.get('X-RateLimit-Limit')).toBe('3');
    expect((await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey })).status).toBe(200);
    expect((await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey })).status).toBe(200);
    await expectError(await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey }), 429, 'RATE_LIMIT_EXCEEDED');
    expect(await orgRow(reg.organizationId)).toMatchObject({ rateLimitPerHour: 3, monthlyStreamLimit: 10 });
  });

  it('changing one limit leaves the other as it was', async () => {
    const reg = await registerOrg(t);
    const path = `/organizations/${reg.organizationId}/rate-limit`;
    expect((await admin('POST', path, { rateLimitPerHour: 50, monthlyStreamLimit: 10 })).status).toBe(200);
    expect((await admin('POST', path, { monthlyStreamLimit: 20 })).status).toBe(200);
    const verify = await (await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey })).json();
    expect(verify.rateLimits).toMatchObject({ perHour: 50, monthlyStreamLimit: 20 });
  });

  it("sets one key's own hourly limit with keyId; a key of another organization is NOT_FOUND", async () => {
    const reg = await registerOrg(t);
    const other = await registerOrg(t);
    const keyOf = async (apiKey: string) =>
      (await (await t.request('GET', '/api/v1/auth/verify', { key: apiKey })).json()).apiKey.id as string;
    const keyId = await keyOf(reg.apiKey);
    const otherKeyId = await keyOf(other.apiKey);
    const path = `/organizations/${reg.organizationId}/rate-limit`;

    await expectError(await admin('POST', path, { rateLimitPerHour: 2, keyId: otherKeyId }), 404, 'NOT_FOUND');
    await expectError(await admin('POST', path, { rateLimitPerHour: 2, keyId: newId() }), 404, 'NOT_FOUND');
    await expectError(await admin('POST', path, { rateLimitPerHour: 2, keyId: 'nope' }), 404, 'NOT_FOUND');

    expect((await admin('POST', path, { rateLimitPerHour: 2, keyId })).status).toBe(200);
    // The key was used once this hour already (keyOf); its own window starts now.
    const first = await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey });
    expect(first.status).toBe(200);
    expect(first.headers.get('X-RateLimit-Limit')).toBe('2');
    expect((await first.json()).rateLimits).toMatchObject({ perHour: 2, remaining: 1 });
    expect((await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey })).status).toBe(200);
    await expectError(await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey }), 429, 'RATE_LIMIT_EXCEEDED');
    // The other organization is untouched.
    expect(
      (await t.request('GET', '/api/v1/auth/verify', { key: other.apiKey })).headers.get('X-RateLimit-Limit'),
    ).toBe('1000');
  });

  it('refuses negative, fractional, non-numeric or missing limits', async () => {
    const reg = await registerOrg(t);
    const path = `/organizations/${reg.organizationId}/rate-limit`;
    const keyId = (await (await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey })).json()).apiKey.id;
    for (const body of [
      { rateLimitPerHour: -1 },
      { rateLimitPerHour: 0 },
      { rateLimitPerHour: 2.5 },
      { rateLimitPerHour: '5' },
      { monthlyStreamLimit: -1 },
      { monthlyStreamLimit: 1.5 },
      {},
      { keyId },
      { keyId, monthlyStreamLimit: 5 },
      { keyId, rateLimitPerHour: 5, monthlyStreamLimit: 5 },
    ]) {
      await expectError(await admin('POST', path, body), 400, 'BAD_REQUEST');
    }
    await expectError(await admin('POST', path, [1, 2]), 400, 'BAD_REQUEST');
  });

  it('suspends an organization: outbox event with the reason, every keyed call refused, listing shows it', async () => {
    const reg = await registerOrg(t);
    const bystander = await registerOrg(t);
    const res = await admin('POST', `/organizations/${reg.organizationId}/suspend`, { reason: 'unpaid invoices' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true });

    const events = (await t.ctx.repos.webhookDeliveries.listForOrg(reg.organizationId, 50)).filter(
      (d) => d.eventType === 'organization.suspended',
    );
    expect(events).toHaveLength(1);
    expect(events[0]?.status).toBe('pending');
    const envelope = JSON.parse(events[0]?.body as string);
    expect(envelope).toMatchObject({
      type: 'organization.suspended',
      organizationId: reg.organizationId,
      data: { organizationId: reg.organizationId, reason: 'unpaid invoices' },
    });

    const calls: Array<[string, string, unknown?]> = [
      ['GET', '/api/v1/auth/verify'],
      ['POST', '/api/v1/auth/rotate'],
      ['GET', '/api/v1/catalog'],
      ['GET', `/api/v1/catalog/${newId()}`],
      ['PUT', '/api/v1/webhook', { regenerateSecret: true }],
      ['GET', '/api/v1/webhook/deliveries'],
      ['POST', '/api/v1/webhook/test'],
    ];
    for (const [method, path, body] of calls) {
      await expectError(await t.request(method, path, { key: reg.apiKey, body }), 403, 'ORGANIZATION_SUSPENDED');
    }
    expect((await t.request('GET', '/api/v1/auth/verify', { key: bystander.apiKey })).status).toBe(200);
    expect(await orgRow(reg.organizationId)).toMatchObject({ isActive: false, suspendedReason: 'unpaid invoices' });
  });

  it('suspending a suspended organization is a CONFLICT; a missing reason is a bad request', async () => {
    const reg = await registerOrg(t);
    const path = `/organizations/${reg.organizationId}/suspend`;
    await expectError(await admin('POST', path), 400, 'BAD_REQUEST');
    await expectError(await admin('POST', path, {}), 400, 'BAD_REQUEST');
    await expectError(await admin('POST', path, { reason: '   ' }), 400, 'BAD_REQUEST');
    await expectError(await admin('POST', path, { reason: 42 }), 400, 'BAD_REQUEST');
    expect((await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey })).status).toBe(200);
    expect((await admin('POST', path, { reason: 'abuse' })).status).toBe(200);
    await expectError(await admin('POST', path, { reason: 'again' }), 409, 'CONFLICT');
    const events = await t.ctx.repos.webhookDeliveries.listForOrg(reg.organizationId, 50);
    expect(events.filter((d) => d.eventType === 'organization.suspended')).toHaveLength(1);
  });

  it('reactivating restores access; reactivating an active organization is a CONFLICT', async () => {
    const reg = await registerOrg(t);
    const base = `/organizations/${reg.organizationId}`;
    await expectError(await admin('POST', `${base}/reactivate`), 409, 'CONFLICT');
    expect((await admin('POST', `${base}/suspend`, { reason: 'review' })).status).toBe(200);
    await expectError(
      await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey }),
      403,
      'ORGANIZATION_SUSPENDED',
    );
    const res = await admin('POST', `${base}/reactivate`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true });
    const verify = await t.request('GET', '/api/v1/auth/verify', { key: reg.apiKey });
    expect(verify.status).toBe(200);
    expect((await verify.json()).organization.isActive).toBe(true);
    expect(await orgRow(reg.organizationId)).toMatchObject({ isActive: true, suspendedReason: null });
    await expectError(await admin('POST', `${base}/reactivate`), 409, 'CONFLICT');
  });
});
