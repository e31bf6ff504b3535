import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** An ingest's item while it is built: a local directory, published in one step. */
export interface Staging {
  id: string;
  dir: string;
  /** Publishes the finished item; it stays marked as publishing until `committed`. Returns its storage path. */
  publish(): Promise<string>;
  /** The catalog row is in: the item is whole and permanent. */
  committed(): void;
  /** Removes whatever this ingest wrote, staged or already published. */
  discard(): Promise<void>;
}

/** How a store builds, retires and sweeps items (the disk's renames, or an object store's uploads). */
export interface ItemLifecycle {
  stage(id: string): Staging;
  /**
   * Takes a published item out of reach before its rows go: `purge` removes it once they are gone,
   * `restore` puts it back if that failed, so nothing is ever half-deleted.
   */
  setAside(storagePath: string): { purge(): Promise<void>; restore(): void };
  /** Removes what ingests killed outright left; see ContentStore.sweep. */
  sweep(
    isCatalogued: (id: string) => Promise<boolean>,
    beforeRemoving: (id: string) => Promise<void>,
  ): Promise<string[]>;
}

const OWNER = 'owner.json';

interface Owner {
  pid: number;
  host: string;
}

/** A staging directory under `<root>/.staging/<id>`, marked with the process that owns it. */
export function makeStagingDir(root: string, id: string): string {
  const stagingRoot = path.join(root, '.staging');
  fs.mkdirSync(stagingRoot, { recursive: true, mode: 0o700 });
  const dir = path.join(stagingRoot, id);
  fs.mkdirSync(dir, { mode: 0o700 });
  const owner: Owner = { pid: process.pid, host: os.hostname() };
  fs.writeFileSync(path.join(dir, OWNER), JSON.stringify(owner));
  return dir;
}

export const removeOwnerMark = (dir: string) => fs.rmSync(path.join(dir, OWNER), { force: true });

/** Staging directories whose owning process on this host no longer runs. */
export function abandonedStagings(root: string): Array<{ id: string; dir: string }> {
  const stagingRoot = path.join(root, '.staging');
  return listDirs(stagingRoot)
    .map((id) => ({ id, dir: path.join(stagingRoot, id) }))
    .filter((s) => !ownerAlive(s.dir));
}

export function listDirs(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return [];
  }
}

/** Whether the ingest that owns a directory may still be running (unknown owners count as alive). */
export function ownerAlive(dir: string): boolean {
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
