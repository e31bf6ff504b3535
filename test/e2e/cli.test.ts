import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import type { Context } from '../../src/context.js';
import { createContext } from '../../src/create-context.js';
import { newId } from '../../src/crypto/tokens.js';
import { registerOrganization } from '../../src/domain/organizations.js';
import { createLogger } from '../../src/log.js';
import { freshDatabaseUrl } from '../helpers/context.js';

// The real `drm` binary in a child process, against a temporary data directory.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(ROOT, 'bin/drm.js');
const WALLET = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment without any DRM_* setting of the machine running the tests. */
const childEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('DRM_')));

function drm(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { cwd: ROOT, env: childEnv, timeout: 90_000 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed and parses its --json output. */
async function drmJson(args: string[]) {
  const r = await drm([...args, '--json']);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

/** A failure: non-zero exit, nothing on stdout, exactly one line on stderr. */
function expectOneLineError(r: Run, code: number, pattern: RegExp) {
  expect(r.code).toBe(code);
  expect(r.stdout).toBe('');
  expect(r.stderr.endsWith('\n')).toBe(true);
  expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  expect(r.stderr).toMatch(pattern);
}

/** A core context on the same database and data directory as the CLI (the server secret lives there). */
async function openCore(dataDir: string, db?: string): Promise<Context> {
  const config = resolveConfig({ dataDir, db, logLevel: 'silent' }, {});
  return createContext(config, { log: createLogger('silent') });
}

// Each run starts node + tsx + the core (~1 s on an idle machine); a loaded CI box can take several times that.
const SLOW = { timeout: 120_000 };

describe('drm admin on SQLite (the default database in --data-dir)', SLOW, () => {
  let dir: string;
  let ctx: Context;
  let orgId: string;
  const data = () => ['--data-dir', dir];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-cli-'));
    ctx = await openCore(dir);
    const reg = await registerOrganization(ctx, { name: 'Cli Films', email: 'ops@cli.test' }, 'professional');
    orgId = reg.organization.id;
  });
  afterAll(async () => {
    await ctx.db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('the core made the server secret and the default database file in the data directory the CLI uses', () => {
    expect(fs.readdirSync(dir).sort()).toEqual(expect.arrayContaining(['drm.db', 'secret.key']));
  });

  it('admin grant makes a wallet an admin (stored lowercase)', async () => {
    const out = await drmJson(['admin', 'grant', WALLET, ...data()]);
    expect(out).toEqual({ success: true, address: WALLET.toLowerCase() });
    expect(await ctx.repos.admins.isGranted(WALLET.toLowerCase())).toBe(true);
  });

  it('admin admins lists the granted wallet', async () => {
    const out = await drmJson(['admin', 'admins', ...data()]);
    expect(out.admins).toContainEqual({
      address: WALLET.toLowerCase(),
      grantedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      source: 'database',
    });
  });

  it('admin orgs --json shows the organization with its counters', async () => {
    const out = await drmJson(['admin', 'orgs', ...data()]);
    expect(out.organizations).toHaveLength(1);
    expect(out.organizations[0]).toMatchObject({
      id: orgId,
      name: 'Cli Films',
      email: 'ops@cli.test',
      isActive: true,
      streamsThisMonth: 0,
      apusdBalance: 0,
      totalApiKeys: 1,
      activeLicenses: 0,
    });
  });

  it('admin orgs without --json prints a table', async () => {
    const r = await drm(['admin', 'orgs', ...data()]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/┌.*┐/);
    for (const text of ['id', 'name', 'licenses', orgId, 'Cli Films', 'yes']) expect(r.stdout).toContain(text);
  });

  it("admin license --content '*' --type video licenses all video, with --watermark and --price", async () => {
    const out = await drmJson([
      ...['admin', 'license', '--org', orgId, '--content', '*', '--type', 'video', '--watermark', '--price', '0.5'],
      ...data(),
    ]);
    expect(out).toEqual({ success: true, licenseId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(await ctx.repos.licenses.findFor(orgId, newId(), 'video')).toMatchObject({
      id: out.licenseId,
      contentId: '*',
      licenseScope: 'all',
      watermarkingEnabled: true,
      pricePerStreamMicro: 500_000,
    });
    expect(await ctx.repos.licenses.findFor(orgId, newId(), 'music')).toBeUndefined();
  });

  it('admin license --no-watermark grants unmarked streaming, and admin orgs shows each license with its flag', async () => {
    const out = await drmJson([
      'admin',
      'license',
      '--org',
      orgId,
      '--content',
      '*',
      '--type',
      'music',
      '--no-watermark',
      ...data(),
    ]);
    expect(await ctx.repos.licenses.findFor(orgId, newId(), 'music')).toMatchObject({
      id: out.licenseId,
      watermarkingEnabled: false,
    });
    const listed = await drmJson(['admin', 'orgs', ...data()]);
    expect(listed.organizations[0].licenses).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          licenseId: out.licenseId,
          contentId: '*',
          contentType: 'music',
          watermarkingEnabled: false,
        }),
        expect.objectContaining({
          contentId: '*',
          contentType: 'video',
          watermarkingEnabled: true,
          pricePerStream: 0.5,
        }),
      ]),
    );
    const table = await drm(['admin', 'orgs', ...data()]);
    expect(table.stdout).toContain('2 (1 unmarked)');
  });

  it('admin rate-limit sets the hourly and monthly limits', async () => {
    const out = await drmJson([
      'admin',
      'rate-limit',
      '--org',
      orgId,
      '--per-hour',
      '5',
      '--monthly-streams',
      '10',
      ...data(),
    ]);
    expect(out).toEqual({ success: true });
    expect(await ctx.repos.organizations.find(orgId)).toMatchObject({ rateLimitPerHour: 5, monthlyStreamLimit: 10 });
  });

  it('admin suspend suspends with a reason and queues organization.suspended', async () => {
    const out = await drmJson(['admin', 'suspend', '--org', orgId, '--reason', 'chargeback fraud', ...data()]);
    expect(out).toEqual({ success: true });
    expect(await ctx.repos.organizations.find(orgId)).toMatchObject({
      isActive: false,
      suspendedReason: 'chargeback fraud',
    });
    const events = await ctx.repos.webhookDeliveries.listForOrg(orgId, 10);
    expect(events.map((e) => e.eventType)).toEqual(['organization.suspended']);
    expect(JSON.parse(events[0]?.body as string).data).toEqual({ organizationId: orgId, reason: 'chargeback fraud' });
  });

  it('admin reactivate reactivates (a sentence without --json)', async () => {
    const r = await drm(['admin', 'reactivate', '--org', orgId, ...data()]);
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toBe(`organization ${orgId} is active again\n`);
    expect((await ctx.repos.organizations.find(orgId))?.isActive).toBe(true);
  });

  it('reactivating an active organization fails; with --json as one JSON line on stderr', async () => {
    const r = await drm(['admin', 'reactivate', '--org', orgId, ...data(), '--json']);
    expectOneLineError(r, 1, /^\{/);
    expect(JSON.parse(r.stderr)).toEqual({ error: expect.stringContaining('not suspended'), code: 'CONFLICT' });
  });

  it('admin revoke takes admin away again', async () => {
    const out = await drmJson(['admin', 'revoke', WALLET, ...data()]);
    expect(out).toEqual({ success: true, address: WALLET.toLowerCase() });
    expect(await ctx.repos.admins.isGranted(WALLET.toLowerCase())).toBe(false);
  });
});

describe.concurrent('drm errors and help', SLOW, () => {
  let dir: string;
  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-cli-err-'));
    expect((await drm(['migrate', '--data-dir', dir])).code).toBe(0);
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('an unknown organization is one line and exit 1', async () => {
    const r = await drm(['admin', 'suspend', '--org', newId(), '--reason', 'x', '--data-dir', dir]);
    expectOneLineError(r, 1, /^drm: organization not found$/m);
  });

  it('a malformed wallet is one line and exit 2', async () => {
    const r = await drm(['admin', 'grant', '0xnot-a-wallet', '--data-dir', dir]);
    expectOneLineError(r, 2, /^drm: 0xnot-a-wallet is not an EVM address$/m);
  });

  it('revoking a wallet that is not an admin is one line and exit 1', async () => {
    const r = await drm(['admin', 'revoke', WALLET, '--data-dir', dir]);
    expectOneLineError(r, 1, /^drm: 0xabcdef0123456789abcdef0123456789abcdef01 is not a platform admin$/m);
  });

  it('--per-hour abc is one line and exit 2', async () => {
    const r = await drm(['admin', 'rate-limit', '--org', newId(), '--per-hour', 'abc', '--data-dir', dir]);
    expectOneLineError(r, 2, /^drm: --per-hour must be a number/);
  });

  it('a missing required option is one line and exit 2', async () => {
    const r = await drm(['admin', 'suspend', '--org', newId(), '--data-dir', dir]);
    expectOneLineError(r, 2, /^drm: .*--reason/);
  });

  it('an invalid --type choice and an unknown command are one line each', async () => {
    const [type, unknown] = await Promise.all([
      drm(['admin', 'license', '--org', newId(), '--content', '*', '--type', 'film', '--data-dir', dir]),
      drm(['admin', 'frobnicate']),
    ]);
    expectOneLineError(type, 2, /^drm: .*--type.*video, music/);
    expectOneLineError(unknown, 2, /^drm: .*frobnicate/);
  });

  it('drm --help lists serve, migrate and admin; drm admin --help the admin commands', async () => {
    const [top, admin] = await Promise.all([drm(['--help']), drm(['admin', '--help'])]);
    expect(top.code).toBe(0);
    for (const cmd of ['serve', 'migrate', 'admin']) expect(top.stdout).toMatch(new RegExp(`^\\s+${cmd}\\b`, 'm'));
    expect(admin.code).toBe(0);
    for (const cmd of ['grant', 'revoke', 'admins', 'orgs', 'license', 'rate-limit', 'suspend', 'reactivate']) {
      expect(admin.stdout).toMatch(new RegExp(`^\\s+${cmd}\\b`, 'm'));
    }
  });
});

describe('drm admin on Postgres (--db)', SLOW, () => {
  let dir: string;
  let db: string;
  let ctx: Context;
  let orgId: string;
  const opts = () => ['--db', db, '--data-dir', dir];

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-cli-pg-'));
    db = await freshDatabaseUrl('postgres', dir);
    ctx = await openCore(dir, db);
    orgId = (await registerOrganization(ctx, { name: 'Pg Films' }, 'professional')).organization.id;
  });
  afterAll(async () => {
    await ctx.db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('grant, license, rate-limit, suspend and orgs act on the Postgres database', async () => {
    const [grant, license, limits] = await Promise.all([
      drmJson(['admin', 'grant', WALLET, ...opts()]),
      drmJson(['admin', 'license', '--org', orgId, '--content', '*', '--type', 'music', ...opts()]),
      drmJson(['admin', 'rate-limit', '--org', orgId, '--per-hour', '7', ...opts()]),
    ]);
    expect(grant).toEqual({ success: true, address: WALLET.toLowerCase() });
    expect(license.success).toBe(true);
    expect(limits).toEqual({ success: true });
    expect(await ctx.repos.admins.isGranted(WALLET.toLowerCase())).toBe(true);
    expect((await ctx.repos.licenses.findFor(orgId, newId(), 'music'))?.id).toBe(license.licenseId);

    expect(await drmJson(['admin', 'suspend', '--org', orgId, '--reason', 'audit', ...opts()])).toEqual({
      success: true,
    });
    const out = await drmJson(['admin', 'orgs', ...opts()]);
    expect(out.organizations).toEqual([
      expect.objectContaining({ id: orgId, name: 'Pg Films', isActive: false, activeLicenses: 1, rateLimitPerHour: 7 }),
    ]);
    expect(fs.existsSync(path.join(dir, 'drm.db'))).toBe(false);
  });

  it('reactivate acts on Postgres', async () => {
    expect(await drmJson(['admin', 'reactivate', '--org', orgId, ...opts()])).toEqual({ success: true });
    expect((await ctx.repos.organizations.find(orgId))?.isActive).toBe(true);
  });
});

describe('the CLI never starts a new deployment by mistake', SLOW, () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-cli-none-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('every command but serve and migrate refuses a data directory without a database: one line, exit 2, nothing created', async () => {
    const nowhere = path.join(dir, 'typo');
    const film = path.join(ROOT, 'package.json');
    const runs = await Promise.all([
      drm(['admin', 'orgs', '--data-dir', nowhere]),
      drm(['admin', 'grant', WALLET, '--data-dir', nowhere]),
      drm(['admin', 'license', '--org', newId(), '--content', '*', '--type', 'video', '--data-dir', nowhere]),
      drm(['ingest', film, '--title', 'x', '--type', 'video', '--data-dir', nowhere]),
      drm(['worker', '--data-dir', nowhere]),
      drm(['jobs', 'list', '--data-dir', nowhere]),
      drm(['analyze', film, '--content', newId(), '--data-dir', nowhere]),
      drm([
        'watermark',
        'embed',
        film,
        '--bits',
        '0'.repeat(40),
        '--out',
        path.join(dir, 'out.mp4'),
        '--data-dir',
        nowhere,
      ]),
    ]);
    for (const r of runs.slice(0, 6))
      expectOneLineError(r, 2, /names no deployment; `drm serve` or `drm migrate` starts a new one/);
    // analyze answers 2 for a weak match, so its refusals are 64 (EX_USAGE); watermark needs the secret only.
    expectOneLineError(runs[6] as Run, 64, /names no deployment/);
    expectOneLineError(runs[7] as Run, 2, /no secret: set DRM_SECRET or point --data-dir/);
    expect(fs.existsSync(nowhere)).toBe(false);
  });

  it('an empty Postgres database is refused too, and left empty', async () => {
    const db = await freshDatabaseUrl('postgres', dir);
    fs.writeFileSync(path.join(dir, 'secret.key'), 'a'.repeat(64));
    expectOneLineError(
      await drm(['admin', 'orgs', '--db', db, '--data-dir', dir]),
      2,
      /the Postgres database holds no drm schema/,
    );
    const migrated = await drmJson(['migrate', '--db', db, '--data-dir', dir]);
    expect(migrated.applied).toBeGreaterThan(0);
  });

  it('drm --version prints the version of package.json', async () => {
    const r = await drm(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version);
  });
});
