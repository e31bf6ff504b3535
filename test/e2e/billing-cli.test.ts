import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';
import { createContext } from '../../src/create-context.js';
import type { OrganizationRow } from '../../src/db/repos/index.js';
import { creditBalance } from '../../src/domain/billing/admin.js';
import { subscribe } from '../../src/domain/billing/subscriptions.js';
import { chargeWatermarkFee } from '../../src/domain/billing/watermark-fee.js';
import { ingestContent } from '../../src/domain/ingest/ingest.js';
import { registerOrganization } from '../../src/domain/organizations.js';
import { createLogger } from '../../src/log.js';
import { makePanFilm } from '../helpers/media.js';
import { drm, runDrm } from '../helpers/serve-process.js';

// `drm ingest --org` takes the watermark fee from the organization's
// balance before any work (refused with nothing written when it is short, waived by a Watermark
// Pass, refunded once when the ingest fails), and `drm admin billing` shows and moves the money
// (`show --upcoming`: the next invoice as it stands).

const T = 240_000;
// biome-ignore lint/suspicious/noExplicitAny: JSON bodies are read field by field in assertions
type Json = Record<string, any>;

describe('drm ingest --org and drm admin billing', () => {
  let dir: string;
  let film: string;
  let orgId: string;
  const data = () => ['--data-dir', dir];
  const json = async (args: string[]) => JSON.parse(await drm([...args, ...data(), '--json'])) as Json;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-billing-cli-'));
    film = makePanFilm(path.join(dir, 'film.mp4'), 4);
    const ctx = await createContext(resolveConfig({ dataDir: dir, logLevel: 'silent' }, {}), {
      log: createLogger('silent'),
    });
    orgId = (await registerOrganization(ctx, { name: 'Studio One', email: 'ops@studio.test' }, 'paid')).organization.id;
    await ctx.db.close();
  }, T);
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const ingest = (...more: string[]) =>
    runDrm(
      ['ingest', film, '--title', 'Pan', '--type', 'video', '--watermark', '--org', orgId, ...data(), ...more],
      {},
      T,
    );

  it(
    'refuses a watermarked ingest the balance cannot pay: 402 INSUFFICIENT_BALANCE, nothing written',
    async () => {
      const r = await ingest('--json');
      expect(r.code).toBe(1);
      expect(JSON.parse(r.stderr.trim())).toMatchObject({
        code: 'INSUFFICIENT_BALANCE',
        error: expect.stringMatching(
          /^the watermark fee of 1,500\.00 APUSD is more than the balance of 0\.00 APUSD: credit it \(drm admin billing credit --org \S+ --amount …\) or waive the fee with a Watermark Pass \(drm admin billing pass --org \S+ --days …\)$/,
        ),
      });
      const shown = await json(['admin', 'billing', 'show', '--org', orgId]);
      expect(shown).toMatchObject({ apusdBalance: 0, ledger: [] });
      const content = path.join(dir, 'content');
      expect(fs.existsSync(content) ? fs.readdirSync(content).filter((f) => !f.startsWith('.')) : []).toEqual([]);
    },
    T,
  );

  it(
    'takes the 720p fee of 1,500 APUSD from a credited balance and licenses the item to the organization',
    async () => {
      expect(
        await json([
          'admin',
          'billing',
          'credit',
          '--org',
          orgId,
          '--amount',
          '2000',
          '--key',
          'wire-0001',
          '--reason',
          'wire',
        ]),
      ).toMatchObject({ applied: true });
      expect(
        await json(['admin', 'billing', 'credit', '--org', orgId, '--amount', '2000', '--key', 'wire-0001']),
      ).toMatchObject({ applied: false });
      const r = await ingest('--json');
      expect(r.code, r.stderr).toBe(0);
      const result = JSON.parse(r.stdout) as Json;
      expect(result.charge).toMatchObject({ organizationId: orgId, feeMicro: 1_500_000_000, waivedByPass: false });
      const shown = await json(['admin', 'billing', 'show', '--org', orgId]);
      expect(shown).toMatchObject({ apusdBalance: 500, ledgerMatchesBalance: true });
      expect((await json(['admin', 'orgs'])).organizations).toEqual([
        expect.objectContaining({ id: orgId, activeLicenses: 1 }),
      ]);
      expect(shown.ledger.map((e: Json) => e.kind).sort()).toEqual(['credit', 'watermark_fee']);
      const table = await drm(['admin', 'billing', 'show', '--org', orgId, ...data()]);
      expect(table).toMatch(/watermark_fee.*-1,500\.00/);
      expect(table).toMatch(/balance 500\.00 APUSD/);
    },
    T,
  );

  it(
    'charges nothing under a Watermark Pass',
    async () => {
      expect(await json(['admin', 'billing', 'pass', '--org', orgId, '--days', '30'])).toMatchObject({ success: true });
      const r = await ingest();
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/watermark fee waived by its Watermark Pass/);
      expect(await json(['admin', 'billing', 'show', '--org', orgId])).toMatchObject({ apusdBalance: 500 });
    },
    T,
  );

  it(
    'refunds the fee of an ingest that is cancelled, once, in the same ledger',
    async () => {
      const ctx = await createContext(resolveConfig({ dataDir: dir, logLevel: 'silent' }, {}), {
        log: createLogger('silent'),
      });
      try {
        await ctx.repos.organizations.update(orgId, { watermarkPassUntil: null });
        await creditBalance(ctx, orgId, { amount: 1500, idempotencyKey: 'for-the-cancelled-ingest' });
        const before = (await ctx.repos.organizations.find(orgId))?.apusdBalanceMicro;
        // cancelled once work has begun: after the source was checked and the fee taken
        const cancelled = new AbortController();
        const request = { input: film, title: 'Pan', type: 'video' as const, watermark: true, organizationId: orgId };
        const hooks = { signal: cancelled.signal, onProgress: () => cancelled.abort() };
        await expect(ingestContent(ctx, request, hooks)).rejects.toThrow();
        const kinds = (await ctx.repos.ledger.list(orgId, { limit: 10, offset: 0 })).map((e) => [
          e.kind,
          e.amountMicro,
        ]);
        expect(kinds).toEqual(
          expect.arrayContaining([
            ['watermark_fee', -1_500_000_000],
            ['refund', 1_500_000_000],
          ]),
        );
        expect((await ctx.repos.organizations.find(orgId))?.apusdBalanceMicro).toBe(before);
        expect(await ctx.repos.ledger.sumOf(orgId)).toBe(before);
      } finally {
        await ctx.db.close();
      }
    },
    T,
  );

  it(
    'refunds the fee of an ingest killed outright when a later ingest sweeps what it left',
    async () => {
      const ctx = await createContext(resolveConfig({ dataDir: dir, logLevel: 'silent' }, {}), {
        log: createLogger('silent'),
      });
      try {
        await creditBalance(ctx, orgId, { amount: 1500, idempotencyKey: 'for-the-killed-ingest' });
        const before = (await ctx.repos.organizations.find(orgId))?.apusdBalanceMicro as number;
        // An ingest that paid and was then killed: its staging directory names an owner that is gone.
        const killedId = randomUUID();
        const staging = ctx.storage.stage(killedId);
        const gone = spawnSync(process.execPath, ['-e', '0']).pid;
        fs.writeFileSync(path.join(staging.dir, 'owner.json'), JSON.stringify({ pid: gone, host: os.hostname() }));
        await chargeWatermarkFee(ctx, {
          organizationId: orgId,
          contentId: killedId,
          type: 'video',
          watermark: true,
          frame: { width: 640, height: 360 },
        });
        expect((await ctx.repos.organizations.find(orgId))?.apusdBalanceMicro).toBe(before - 1_500_000_000);
        await ingestContent(ctx, { input: film, title: 'Plain', type: 'video', watermark: false });
        expect((await ctx.repos.ledger.findByKey(`refund:watermark-fee:${killedId}`))?.amountMicro).toBe(1_500_000_000);
        expect((await ctx.repos.organizations.find(orgId))?.apusdBalanceMicro).toBe(before);
        expect(fs.existsSync(staging.dir)).toBe(false);
      } finally {
        await ctx.db.close();
      }
    },
    T,
  );

  it(
    'lists, shows and deletes content, and lists cases, from the command line',
    async () => {
      const list = await json(['content', 'list']);
      expect(list.total).toBeGreaterThanOrEqual(2);
      const plain = (list.content as Json[]).find((c) => c.title === 'Plain') as Json;
      expect(await json(['content', 'show', plain.id])).toMatchObject({
        id: plain.id,
        status: 'ready',
        references: { liveSessions: 0 },
      });
      expect(await drm(['content', 'list', ...data()])).toMatch(/Plain/);
      expect(await json(['content', 'delete', plain.id])).toMatchObject({ success: true, outcome: 'removed' });
      expect(fs.existsSync(path.join(dir, 'content', plain.id))).toBe(false);
      const again = await runDrm(['content', 'delete', plain.id, ...data()]);
      expect([again.code, again.stderr]).toEqual([
        1,
        expect.stringMatching(new RegExp(`content ${plain.id} not found; drm content list shows the catalog`)),
      ]);
      expect(await json(['cases', 'list'])).toMatchObject({ cases: [], total: 0 });
    },
    T,
  );

  it(
    'shows the upcoming invoice of an organization: its lines, total and what autopay will do',
    async () => {
      const ctx = await createContext(resolveConfig({ dataDir: dir, logLevel: 'silent' }, {}), {
        log: createLogger('silent'),
      });
      try {
        await subscribe(ctx, (await ctx.repos.organizations.find(orgId)) as OrganizationRow, {
          product: 'videos',
          interval: 'month',
        });
      } finally {
        await ctx.db.close();
      }
      const shown = await json(['admin', 'billing', 'show', '--org', orgId, '--upcoming']);
      expect(shown).toMatchObject({
        organizationId: orgId,
        amountApusd: 99,
        autopay: { enabled: false, action: 'none' },
      });
      expect(shown.lines).toEqual([expect.objectContaining({ kind: 'subscription', quantity: 1, amount: 99 })]);
      const table = await drm(['admin', 'billing', 'show', '--org', orgId, '--upcoming', ...data()]);
      expect(table).toMatch(/upcoming invoice for \d{4}-\d{2} .*: 99\.00 APUSD/);
      expect(table).toMatch(/subscription .*99\.00/);
      expect(table).toMatch(/autopay off: none: /);
    },
    T,
  );

  it(
    'closes periods from the command line, refusing a month that has not ended',
    async () => {
      expect(await json(['admin', 'billing', 'close-period'])).toMatchObject({ success: true, issued: 0 });
      const r = await runDrm(['admin', 'billing', 'close-period', '--period', '2999-01', ...data()]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/has not ended/);
    },
    T,
  );
});
