import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creditBalance } from '../../src/domain/billing/admin.js';
import { chargeWatermarkFee } from '../../src/domain/billing/watermark-fee.js';
import type { Context } from '../../src/context.js';
import { settleEarlierAttempt } from '../../src/domain/ingest/ingest-attempts.js';
import { openContentStore } from '../../src/storage/open.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { addContent, registerOrg } from '../helpers/fixtures.js';
import { startS3, type TestS3 } from '../helpers/s3.js';

// A queued ingest whose worker died (a machine gone for good) is started again by another
// worker. What the dead attempt did is settled first, from the content id the job recorded.

describe.each(DIALECTS)('an earlier attempt at a queued ingest, on %s', (dialect) => {
  let t: TestApp;
  let s3: TestS3;
  /** the deployment on an object store, where an item is published (its manifest written) before its row */
  let ctx: Context;
  let orgId: string;
  const balance = async () => (await t.ctx.repos.organizations.find(orgId))?.apusdBalanceMicro as number;

  beforeAll(async () => {
    [t, s3] = await Promise.all([makeTestApp(dialect), startS3()]);
    const storage = await openContentStore(
      {
        store: { kind: 's3', bucket: s3.bucket, prefix: 'content' },
        s3: { endpoint: s3.endpoint },
        segmentDelivery: 'proxy',
      },
      t.dir,
      Buffer.alloc(32, 3),
    );
    ctx = { ...t.ctx, storage };
    orgId = (await registerOrg(t)).organizationId;
    await creditBalance(t.ctx, orgId, { amount: 5000, idempotencyKey: 'for-the-attempts' });
  });
  afterAll(async () => {
    await t.close();
    await s3.close();
  });

  it('that paid the watermark fee and published without a catalog row: the fee comes back once and the item goes', async () => {
    const contentId = randomUUID();
    const before = await balance();
    await chargeWatermarkFee(ctx, {
      organizationId: orgId,
      contentId,
      type: 'video',
      watermark: true,
      frame: { width: 640, height: 360 },
    });
    expect(await balance()).toBeLessThan(before);
    const staging = ctx.storage.stage(contentId);
    fs.writeFileSync(path.join(staging.dir, 'thumbnail.jpg'), 'x');
    await staging.publish();
    expect(await ctx.storage.backend.has(contentId)).toBe(true);

    expect(await settleEarlierAttempt(ctx, contentId)).toBeUndefined();
    expect(await balance()).toBe(before);
    expect(await ctx.storage.backend.has(contentId)).toBe(false);
    // A third worker settling the same attempt again refunds nothing more.
    await settleEarlierAttempt(ctx, contentId);
    expect(await balance()).toBe(before);
  });

  it('that was catalogued before its worker died: the job ends with that item, ingested once', async () => {
    const row = await addContent(t, {
      title: 'Done Before',
      duration: 22_000,
      segmentCount: 3,
      isWatermarked: true,
      resolution: '360p',
    });
    expect(await settleEarlierAttempt(ctx, row.id)).toMatchObject({
      contentId: row.id,
      title: 'Done Before',
      duration: 22,
      segmentCount: 3,
      isWatermarked: true,
    });
    expect(await t.ctx.repos.content.find(row.id)).toBeDefined();
  });
});
