import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DrmError } from '../errors.js';
import {
  abandonedStagings,
  type ItemLifecycle,
  listDirs,
  makeStagingDir,
  ownerAlive,
  removeOwnerMark,
  type Staging,
} from './staging.js';

/** Present from the rename into place until the catalog row is committed. */
const PUBLISHING = '.publishing';

/**
 * Items on this machine's disk, `<root>/<id>/`: built in `.staging/<id>/` and renamed into place
 * in one step, so a reader sees either nothing or every file.
 */
export class DiskLifecycle implements ItemLifecycle {
  constructor(private readonly root: string) {}

  stage(id: string): Staging {
    const dir = makeStagingDir(this.root, id);
    const final = path.join(this.root, id);
    let moved = false;
    return {
      id,
      dir,
      publish: async () => {
        if (fs.existsSync(final)) throw new DrmError('CONFLICT', `content ${id} already exists in ${this.root}`);
        fs.writeFileSync(path.join(dir, PUBLISHING), '');
        fs.renameSync(dir, final);
        moved = true;
        return id;
      },
      committed: () => {
        fs.rmSync(path.join(final, PUBLISHING), { force: true });
        removeOwnerMark(final);
      },
      discard: async () => {
        fs.rmSync(moved ? final : dir, { recursive: true, force: true });
      },
    };
  }

  setAside(storagePath: string) {
    const trashRoot = path.join(this.root, '.trash');
    fs.mkdirSync(trashRoot, { recursive: true, mode: 0o700 });
    const from = path.join(this.root, storagePath);
    const to = path.join(trashRoot, `${path.basename(storagePath)}-${randomBytes(6).toString('hex')}`);
    const present = fs.existsSync(from);
    if (present) fs.renameSync(from, to);
    return {
      purge: async () => fs.rmSync(to, { recursive: true, force: true }),
      restore: () => {
        if (present) fs.renameSync(to, from);
      },
    };
  }

  /**
   * Staging directories of processes on this host that no longer run, and items moved into place
   * whose catalog row never came (`isCatalogued` says). Another running ingest's work is left alone.
   */
  async sweep(
    isCatalogued: (id: string) => Promise<boolean>,
    beforeRemoving: (id: string) => Promise<void>,
  ): Promise<string[]> {
    const removed: string[] = [];
    for (const { id, dir } of abandonedStagings(this.root)) {
      // What must happen for an abandoned item (a refund) happens first: if it fails, the
      // directory stays for the next sweep to try again.
      await beforeRemoving(id);
      fs.rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
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
