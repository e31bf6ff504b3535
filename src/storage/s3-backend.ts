import path from 'node:path';
import type { Readable } from 'node:stream';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { DrmError } from '../errors.js';
import type { ContentBackend, Manifest, PublishResult } from './backend.js';
import { objectName } from './object-keys.js';
import { putFile } from './s3-upload.js';
import { isItemFileName, itemFilesUnder } from './staged-files.js';
import { type Clock, systemClock } from '../clock.js';

const MANIFEST = 'manifest.json';
/** Files sent at once while publishing: enough to fill a link, few enough for a small machine. */
const PARALLEL_PUTS = 4;

export interface S3Location {
  bucket: string;
  /** key prefix, without a trailing slash ('' for the bucket's root) */
  prefix: string;
}

/**
 * Content in an S3-compatible object store: `<prefix>/<id>/<hmac>` per file (object-keys.ts) and
 * `<prefix>/<id>/manifest.json` written last. A reader trusts only what a manifest lists, so an
 * item is published all at once; a publish that fails removes what it put, and one killed
 * midway leaves objects without a manifest that `sweep` removes.
 */
export class S3Backend implements ContentBackend {
  readonly location: string;
  private readonly manifests = new Map<string, Manifest>();

  constructor(
    private readonly s3: S3Client,
    private readonly where: S3Location,
    private readonly keyOfNames: Buffer,
    private readonly clock: Clock = systemClock,
  ) {
    this.location = `s3://${where.bucket}${where.prefix ? `/${where.prefix}` : ''}`;
  }

  async publish(id: string, stagedDir: string): Promise<PublishResult> {
    if (await this.manifestOf(id)) throw new DrmError('CONFLICT', `content ${id} already exists in ${this.location}`);
    const names = itemFilesUnder(stagedDir);
    const manifest: Manifest = { id, publishedAt: this.clock.now(), files: {} };
    let multipart = 0;
    try {
      await inBatches(names, PARALLEL_PUTS, async (name) => {
        const key = this.keyOf(id, objectName(this.keyOfNames, id, name));
        const sent = await putFile(this.s3, this.where.bucket, key, path.join(stagedDir, name), contentTypeOf(name));
        if (sent.parts > 1) multipart += 1;
        manifest.files[name] = { key, bytes: sent.bytes };
      });
      await this.s3.send(
        new PutObjectCommand({
          Bucket: this.where.bucket,
          Key: this.keyOf(id, MANIFEST),
          Body: JSON.stringify(manifest),
          ContentType: 'application/json',
        }),
      );
    } catch (err) {
      await this.deletePrefix(id).catch(() => {});
      throw err;
    }
    const bytes = Object.values(manifest.files).reduce((sum, f) => sum + f.bytes, 0);
    return { files: names.length, bytes, multipart };
  }

  async has(id: string): Promise<boolean> {
    return (await this.manifestOf(id)) !== undefined;
  }

  async names(id: string): Promise<string[]> {
    return Object.keys((await this.requireManifest(id)).files).sort();
  }

  async read(id: string, name: string): Promise<Buffer> {
    const { body } = await this.stream(id, name);
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async stream(id: string, name: string): Promise<{ body: Readable; bytes: number }> {
    const file = await this.fileOf(id, name);
    const got = await this.s3.send(new GetObjectCommand({ Bucket: this.where.bucket, Key: file.key }));
    return { body: got.Body as Readable, bytes: Number(got.ContentLength ?? file.bytes) };
  }

  async signedUrl(id: string, name: string, seconds: number): Promise<{ url: string; bytes: number }> {
    const file = await this.fileOf(id, name);
    const url = await getSignedUrl(this.s3, new GetObjectCommand({ Bucket: this.where.bucket, Key: file.key }), {
      expiresIn: seconds,
    });
    return { url, bytes: file.bytes };
  }

  async remove(id: string): Promise<void> {
    this.manifests.delete(id);
    // The manifest first: from then on the item is not published, whatever happens to the rest.
    await this.s3.send(
      new DeleteObjectsCommand({ Bucket: this.where.bucket, Delete: { Objects: [{ Key: this.keyOf(id, MANIFEST) }] } }),
    );
    await this.deletePrefix(id);
  }

  async sweep(olderThanMs: number): Promise<number> {
    const cutoff = this.clock.now() - olderThanMs;
    const byItem = new Map<string, Array<{ key: string; at: number }>>();
    for await (const object of this.listed(this.where.prefix ? `${this.where.prefix}/` : '')) {
      const id = object.key.slice(this.where.prefix ? this.where.prefix.length + 1 : 0).split('/')[0] as string;
      // `.spool/` holds files waiting for jobs (spool.ts), not items.
      if (id.startsWith('.')) continue;
      byItem.set(id, [...(byItem.get(id) ?? []), object]);
    }
    let removed = 0;
    for (const [id, objects] of byItem) {
      if (objects.some((o) => o.key.endsWith(`/${MANIFEST}`))) continue;
      const stale = objects.filter((o) => o.at < cutoff).map((o) => o.key);
      await this.deleteKeys(stale);
      removed += stale.length;
      if (stale.length > 0) this.manifests.delete(id);
    }
    return removed;
  }

  /** Every published item (it has a manifest) and when it was published. */
  async *published(): AsyncGenerator<{ id: string; at: number }> {
    for await (const object of this.listed(this.where.prefix ? `${this.where.prefix}/` : '')) {
      if (!object.key.endsWith(`/${MANIFEST}`)) continue;
      const parts = object.key.split('/');
      yield { id: parts[parts.length - 2] as string, at: object.at };
    }
  }

  private keyOf(id: string, leaf: string): string {
    if (!isItemFileName(id) || id.includes('/')) throw new DrmError('NOT_FOUND', `no content ${JSON.stringify(id)}`);
    return `${this.where.prefix ? `${this.where.prefix}/` : ''}${id}/${leaf}`;
  }

  /** A published item's manifest; kept once read, since a published item never changes. */
  private async manifestOf(id: string): Promise<Manifest | undefined> {
    const cached = this.manifests.get(id);
    if (cached) return cached;
    try {
      const got = await this.s3.send(
        new GetObjectCommand({ Bucket: this.where.bucket, Key: this.keyOf(id, MANIFEST) }),
      );
      const manifest = JSON.parse(
        await (got.Body as { transformToString(): Promise<string> }).transformToString(),
      ) as Manifest;
      if (this.manifests.size >= 1000) this.manifests.delete(this.manifests.keys().next().value as string);
      this.manifests.set(id, manifest);
      return manifest;
    } catch (err) {
      if ((err as { name?: string }).name === 'NoSuchKey') return undefined;
      throw err;
    }
  }

  private async requireManifest(id: string): Promise<Manifest> {
    const manifest = await this.manifestOf(id);
    if (!manifest) throw new DrmError('NOT_FOUND', `content ${id} is not in the store`);
    return manifest;
  }

  private async fileOf(id: string, name: string) {
    const file = (await this.requireManifest(id)).files[name];
    if (!file) throw new DrmError('NOT_FOUND', `no file ${JSON.stringify(name)} in content ${id}`);
    return file;
  }

  private async *listed(prefix: string): AsyncGenerator<{ key: string; at: number }> {
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({ Bucket: this.where.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) if (o.Key) yield { key: o.Key, at: o.LastModified?.getTime() ?? 0 };
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  private async deletePrefix(id: string): Promise<void> {
    const keys: string[] = [];
    for await (const o of this.listed(this.keyOf(id, ''))) keys.push(o.key);
    await this.deleteKeys(keys);
  }

  private async deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const Objects = keys.slice(i, i + 1000).map((Key) => ({ Key }));
      await this.s3.send(new DeleteObjectsCommand({ Bucket: this.where.bucket, Delete: { Objects } }));
    }
  }
}

/**
 * Runs `work` on every item, `width` at a time. After a failure no item is started, and the
 * failure is thrown only once every item under way has ended, so that a clean-up that follows
 * does not race uploads still landing.
 */
async function inBatches<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async () => {
    while (!failure && next < items.length) {
      const item = items[next++] as T;
      await work(item).catch((err) => {
        failure ??= { err };
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, lane));
  if (failure) throw failure.err;
}

function contentTypeOf(name: string): string {
  const ext = path.extname(name);
  return (
    {
      '.ts': 'video/mp2t',
      '.m3u8': 'application/vnd.apple.mpegurl',
      '.jpg': 'image/jpeg',
      '.mp4': 'video/mp4',
      '.json': 'application/json',
    }[ext] ?? 'application/octet-stream'
  );
}
