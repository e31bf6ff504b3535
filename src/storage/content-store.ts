import fs from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { type HlsSegment, PLAYLIST_FILE, parsePlaylist } from '../media/hls.js';
import { type Clock, systemClock } from '../clock.js';
import type { ContentBackend } from './backend.js';
import { DiskLifecycle } from './disk-lifecycle.js';
import { FileBackend } from './file-backend.js';
import { ObjectLifecycle } from './object-lifecycle.js';
import type { S3Backend } from './s3-backend.js';
import { DiskSpool, type Spool } from './spool.js';
import type { ItemLifecycle, Staging } from './staging.js';

export type { Staging } from './staging.js';

/**
 * Where packaged content lives: per item the playlist and segments of each variant (`plain/`, or
 * `a/` and `b/`), `thumbnail.jpg`, `preview.mp4` and the detection reference. The files are on
 * this machine's disk (`<data-dir>/content/<id>/`) or in an S3-compatible store (backend.ts);
 * either way an item is published whole, and read back by its files' names.
 */
export type VariantDir = 'plain' | 'a' | 'b';

/** Segment n of a variant, by the name ingest gave it. */
export const segmentName = (variant: VariantDir, n: number) => `${variant}/${String(n).padStart(5, '0')}.ts`;

export class ContentStore {
  /** Published items never change, so their segment lists are read once (the most recent 500 kept). */
  private readonly playlists = new Map<string, HlsSegment[]>();
  private readonly lifecycle: ItemLifecycle;

  /**
   * `root` is the local directory: the items themselves on a disk store, and the staging (and a
   * cache of the files ffmpeg must read from a path) with an object store.
   */
  constructor(
    readonly root: string,
    readonly backend: ContentBackend = new FileBackend(root),
    /** files waiting for a job: leaks, queued ingest sources */
    readonly spool: Spool = new DiskSpool(path.join(root, '..', 'uploads')),
    clock: Clock = systemClock,
  ) {
    // by its location, not instanceof: a disk store must not load the object store's code
    this.lifecycle = backend.location.startsWith('s3://')
      ? new ObjectLifecycle(root, backend as S3Backend, clock)
      : new DiskLifecycle(root);
  }

  /** Whether segments can be handed to players as short-lived URLs of the store itself. */
  get signsUrls(): boolean {
    return !(this.backend instanceof FileBackend);
  }

  /** The segments (durations and files) of a published item's variant, from the playlist ingest wrote. */
  async segments(storagePath: string, variant: VariantDir): Promise<HlsSegment[]> {
    const key = `${storagePath}/${variant}`;
    let list = this.playlists.get(key);
    if (!list) {
      const name = `${variant}/${PLAYLIST_FILE}`;
      list = parsePlaylist((await this.backend.read(storagePath, name)).toString('utf8'), `${storagePath}/${name}`);
      if (this.playlists.size >= 500) this.playlists.delete(this.playlists.keys().next().value as string);
      this.playlists.set(key, list);
    }
    return list;
  }

  read(storagePath: string, name: string): Promise<Buffer> {
    return this.backend.read(storagePath, name);
  }

  open(storagePath: string, name: string): Promise<{ body: Readable; bytes: number }> {
    return this.backend.stream(storagePath, name);
  }

  signedUrl(storagePath: string, name: string, seconds: number): Promise<{ url: string; bytes: number } | undefined> {
    return this.backend.signedUrl(storagePath, name, seconds);
  }

  /**
   * A file as a path ffmpeg can read (the detection reference, a segment to picture): on a disk
   * store the file itself; from an object store a copy in `<root>/.cache/`, fetched once (a
   * published item never changes).
   */
  async localFile(storagePath: string, name: string): Promise<string> {
    if (this.backend instanceof FileBackend) return this.file(storagePath, name);
    const copy = path.join(this.root, '.cache', storagePath, name);
    if (fs.existsSync(copy)) return copy;
    fs.mkdirSync(path.dirname(copy), { recursive: true, mode: 0o700 });
    const part = `${copy}.${process.pid}.part`;
    fs.writeFileSync(part, await this.backend.read(storagePath, name));
    fs.renameSync(part, copy);
    return copy;
  }

  stage(id: string): Staging {
    return this.lifecycle.stage(id);
  }

  /** Takes an item out of reach before its rows go (ItemLifecycle.setAside). */
  setAside(storagePath: string): { purge(): Promise<void>; restore(): void } {
    for (const key of [...this.playlists.keys()].filter((k) => k.startsWith(`${storagePath}/`)))
      this.playlists.delete(key);
    fs.rmSync(path.join(this.root, '.cache', storagePath), { recursive: true, force: true });
    return this.lifecycle.setAside(storagePath);
  }

  /**
   * Removes what an ingest killed outright (power loss, SIGKILL) left behind: its staging, and an
   * item published whose catalog row never came (`isCatalogued` says). `beforeRemoving` runs
   * first for each (a refund); another running ingest's work is left alone.
   */
  sweep(
    isCatalogued: (id: string) => Promise<boolean>,
    beforeRemoving: (id: string) => Promise<void> = async () => {},
  ): Promise<string[]> {
    return this.lifecycle.sweep(isCatalogued, beforeRemoving);
  }

  // The disk layout, for a disk store (and the tests that look inside it).

  dirOf(storagePath: string): string {
    return path.join(this.root, storagePath);
  }

  file(storagePath: string, name: string): string {
    return path.join(this.dirOf(storagePath), name);
  }

  segmentFile(storagePath: string, variant: VariantDir, n: number): string {
    return this.file(storagePath, segmentName(variant, n));
  }
}
