import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DrmError } from '../errors.js';
import { type HlsSegment, playlistIn, readPlaylist } from '../media/hls.js';

/**
 * Where packaged content lives: `<data-dir>/content/<id>/` with the playlist and segments of each
 * variant (`plain/`, or `a/` and `b/`), `thumbnail.jpg` and `preview.mp4`. Ingest builds a
 * content item in `.staging/<id>/` and renames it into place in one step, so a reader sees either
 * nothing or every file. The local disk is the one implementation; an S3-compatible store would
 * sit behind the same methods (DESIGN.md, "Scale-out path").
 */
export type VariantDir = 'plain' | 'a' | 'b';

const OWNER = 'owner.json';
/** Present from the rename into place until the catalog row is committed. */
const PUBLISHING = '.publishing';

interface Owner {
  pid: number;
  host: string;
}

export interface Staging {
  id: string;
  dir: string;
  /** Moves the finished item into place; it stays marked as publishing until `committed`. */
  publish(): string;
  /** The catalog row is in: the item is whole and permanent. */
  committed(): void;
  /** Removes whatever this ingest wrote, staged or already moved into place. */
  discard(): void;
}

export class ContentStore {
  /** Published items never change, so their segment lists are read once (the most recent 500 kept). */
  private readonly playlists = new Map<string, HlsSegment[]>();

  constructor(readonly root: string) {}

  /** The segments (durations and files) of a published item's variant, from the playlist ingest wrote. */
  segments(storagePath: string, variant: VariantDir): HlsSegment[] {
    const key = `${storagePath}/${variant}`;
    let list = this.playlists.get(key);
    if (!list) {
      list = readPlaylist(playlistIn(path.join(this.dirOf(storagePath), variant)));
      if (this.playlists.size >= 500) this.playlists.delete(this.playlists.keys().next().value as string);
      this.playlists.set(key, list);
    }
    return list;
  }

  /** The directory of a published item (storagePath is relative to the store's root). */
  dirOf(storagePath: string): string {
    return path.join(this.root, storagePath);
  }

  file(storagePath: string, name: string): string {
    return path.join(this.dirOf(storagePath), name);
  }

  segmentFile(storagePath: string, variant: VariantDir, n: number): string {
    return path.join(this.dirOf(storagePath), variant, `${String(n).padStart(5, '0')}.ts`);
  }

  /**
   * Moves a published item's files aside (one rename) before its rows go: `purge` removes them once
   * the rows are gone, `restore` puts them back if that failed, so nothing is ever half-deleted.
   */
  setAside(storagePath: string): { purge(): void; restore(): void } {
    const trashRoot = path.join(this.root, '.trash');
    fs.mkdirSync(trashRoot, { recursive: true, mode: 0o700 });
    const from = this.dirOf(storagePath);
    const to = path.join(trashRoot, `${path.basename(storagePath)}-${process.pid}-${Date.now()}`);
    const present = fs.existsSync(from);
    if (present) fs.renameSync(from, to);
    for (const key of [...this.playlists.keys()].filter((k) => k.startsWith(`${storagePath}/`))) this.playlists.delete(key);
    return {
      purge: () => fs.rmSync(to, { recursive: true, force: true }),
      restore: () => {
        if (present) fs.renameSync(to, from);
      },
    };
  }

  stage(id: string): Staging {
    const stagingRoot = path.join(this.root, '.staging');
    fs.mkdirSync(stagingRoot, { recursive: true, mode: 0o700 });
    const dir = path.join(stagingRoot, id);
    fs.mkdirSync(dir, { mode: 0o700 });
    const owner: Owner = { pid: process.pid, host: os.hostname() };
    fs.writeFileSync(path.join(dir, OWNER), JSON.stringify(owner));
    const final = path.join(this.root, id);
    let moved = false;
    return {
      id,
      dir,
      publish: () => {
        if (fs.existsSync(final)) throw new DrmError('CONFLICT', `content ${id} already exists in ${this.root}`);
        fs.writeFileSync(path.join(dir, PUBLISHING), '');
        fs.renameSync(dir, final);
        moved = true;
        return id;
      },
      committed: () => {
        fs.rmSync(path.join(final, PUBLISHING), { force: true });
        fs.rmSync(path.join(final, OWNER), { force: true });
      },
      discard: () => {
        fs.rmSync(moved ? final : dir, { recursive: true, force: true });
      },
    };
  }

  /**
   * Removes what an ingest killed outright (power loss, SIGKILL) left behind: staging directories
   * of processes on this host that no longer run, and items moved into place whose catalog row
   * never came (`isCatalogued` says). Another running ingest's work is left alone.
   */
  async sweep(isCatalogued: (id: string) => Promise<boolean>, beforeRemoving: (id: string) => Promise<void> = async () => {}): Promise<string[]> {
    const removed: string[] = [];
    const stagingRoot = path.join(this.root, '.staging');
    for (const id of listDirs(stagingRoot)) {
      const dir = path.join(stagingRoot, id);
      if (!ownerAlive(dir)) {
        // What must happen for an abandoned item (a refund) happens first: if it fails, the
        // directory stays for the next sweep to try again.
        await beforeRemoving(id);
        fs.rmSync(dir, { recursive: true, force: true });
        removed.push(dir);
      }
    }
    for (const id of listDirs(this.root)) {
      const dir = path.join(this.root, id);
      if (id.startsWith('.') || !fs.existsSync(path.join(dir, PUBLISHING)) || ownerAlive(dir)) continue;
      if (await isCatalogued(id)) {
        fs.rmSync(path.join(dir, PUBLISHING), { force: true });
      } else {
        await beforeRemoving(id);
        fs.rmSync(dir, { recursive: true, force: true });
        removed.push(dir);
      }
    }
    return removed;
  }
}

function listDirs(dir: string): string[] {
  try {
    return fs.readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return [];
  }
}

/** Whether the ingest that owns a directory may still be running (unknown owners count as alive). */
function ownerAlive(dir: string): boolean {
  let owner: Owner;
  try {
    owner = JSON.parse(fs.readFileSync(path.join(dir, OWNER), 'utf8')) as Owner;
  } catch {
    return false;
  }
  if (owner.host !== os.hostname()) return true;
  if (owner.pid === process.pid) return true;
  try {
    process.kill(owner.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
