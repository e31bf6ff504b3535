import { createDecipheriv } from 'node:crypto';
import fs from 'node:fs';
import type { Context } from '../../src/context.js';
import { unseal } from '../../src/crypto/sealed.js';
import { newId } from '../../src/crypto/tokens.js';
import type { ContentRow } from '../../src/db/repos/index.js';
import { contentRule } from '../../src/domain/content-rule.js';
import { variantFor } from '../../src/watermark/segments.js';
import type { TestApp } from './context.js';

/** Registers an organization through the API and returns what registration answered. */
export async function registerOrg(t: TestApp, body: Record<string, unknown> = {}) {
  const res = await t.request('POST', '/api/v1/auth/register', {
    body: { name: 'Acme Films', email: 'ops@acme.test', ...body },
  });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as {
    organizationId: string;
    apiKey: string;
    walletAddress: string;
    webhookSecret: string;
    scopes: string[];
  };
}

/** Content rows stand in for ingest until it exists: the catalog reads the same table. */
export async function addContent(t: TestApp, fields: Partial<ContentRow> = {}): Promise<ContentRow> {
  const row: ContentRow = {
    id: newId(),
    title: 'Big Buck Bunny',
    description: 'An open movie',
    type: 'video',
    duration: 60_000,
    resolution: '1080p',
    isWatermarked: true,
    segmentCount: 6,
    storagePath: null,
    contentKey: null,
    segmentRule: 'keyed',
    segmentSeconds: 10,
    status: 'ready',
    createdAt: t.clock.now(),
    ...fields,
  };
  await t.ctx.repos.content.insert(row);
  return row;
}

export async function license(t: TestApp, organizationId: string, contentId: string, contentType = 'video') {
  const { grantLicense } = await import('../../src/domain/licenses.js');
  return grantLicense(t.ctx, organizationId, { contentId, contentType });
}

/** Catalog rows in a data directory's SQLite file, read as another process would. */
export async function contentRowsIn(sqliteFile: string): Promise<number> {
  const { default: Sqlite } = await import('better-sqlite3');
  const db = new Sqlite(sqliteFile, { readonly: true });
  try {
    return (db.prepare('select count(*) as n from content').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Registers an organization with a running `drm serve` over HTTP. */
export async function registerOver(url: string, name: string): Promise<{ organizationId: string; apiKey: string }> {
  const res = await fetch(`${url}/api/v1/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, email: 'ops@example.test' }),
  });
  if (res.status !== 201) throw new Error(`register failed: ${res.status} ${await res.text()}`);
  return (await res.json()) as { organizationId: string; apiKey: string };
}

/** Segment n of a stored variant, decrypted as a player does: AES-128-CBC, IV = the sequence number. */
export function decryptedSegment(ctx: Context, content: ContentRow, variant: 'plain' | 'a' | 'b', n: number): Buffer {
  const key = Buffer.from(unseal(ctx.keys.seal, content.contentKey as string), 'base64');
  const iv = Buffer.alloc(16);
  iv.writeUInt32BE(n, 12);
  const d = createDecipheriv('aes-128-cbc', key, iv);
  return Buffer.concat([
    d.update(fs.readFileSync(ctx.storage.segmentFile(content.storagePath as string, variant, n))),
    d.final(),
  ]);
}

/** What a viewer with this binaryId receives of a watermarked item: every segment from the variant its bit names, as one MPEG-TS. */
export function viewerCopy(ctx: Context, content: ContentRow, binaryId: string): Buffer {
  const rule = contentRule(ctx, content);
  return Buffer.concat(
    Array.from({ length: content.segmentCount }, (_, n) =>
      decryptedSegment(ctx, content, variantFor(binaryId, n, rule) === 'A' ? 'a' : 'b', n),
    ),
  );
}
