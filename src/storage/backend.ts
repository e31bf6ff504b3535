import type { Readable } from 'node:stream';

/**
 * Where a published content item's files live, behind one interface: a directory on this
 * machine's disk, or an S3-compatible object store. An item is published from a
 * staged directory in one step as far as a reader can tell (a rename; or every object, then the
 * manifest last), and read back by the names ingest gave its files (`a/00003.ts`, `thumbnail.jpg`).
 */
export interface ContentBackend {
  /** said in logs and by drm doctor: `file:/srv/drm/content` or `s3://bucket/prefix` */
  readonly location: string;
  /** Publishes the files under `stagedDir` as item `id`; on failure nothing of it is published or left. */
  publish(id: string, stagedDir: string): Promise<PublishResult>;
  /** Whether item `id` is published (whole: a half-written one is not). */
  has(id: string): Promise<boolean>;
  /** The names of a published item's files, sorted. */
  names(id: string): Promise<string[]>;
  read(id: string, name: string): Promise<Buffer>;
  /** A file as a stream, with its size (the segments a proxying server sends on). */
  stream(id: string, name: string): Promise<{ body: Readable; bytes: number }>;
  /**
   * A URL a player may fetch the file from for `seconds` without credentials, with the file's size; undefined where the
   * store has none (a disk).
   */
  signedUrl(id: string, name: string, seconds: number): Promise<{ url: string; bytes: number } | undefined>;
  /** Removes a published item: it stops being published first, then its files go. */
  remove(id: string): Promise<void>;
  /**
   * Removes what publishes killed midway left (objects of no published item, older than `olderThanMs`); returns how
   * many.
   */
  sweep(olderThanMs: number): Promise<number>;
}

export interface PublishResult {
  files: number;
  bytes: number;
  /** files sent in several parts (an object store's multipart upload) */
  multipart: number;
}

/** What an object store keeps per item, written last: a reader trusts only what it lists. */
export interface Manifest {
  id: string;
  publishedAt: number;
  files: Record<string, { key: string; bytes: number }>;
}
