import fs from 'node:fs';
import path from 'node:path';
import { DrmError } from '../errors.js';
import type { ContentBackend, PublishResult } from './backend.js';
import { filesUnder, isItemFileName } from './staged-files.js';

/** Marks an item moved into place whose catalog row is not in yet (ContentStore's publishing). */
const PUBLISHING = '.publishing';

/**
 * Content on this machine's disk, `<root>/<id>/…`: publishing is one rename, so a reader sees the
 * whole item or nothing, and nothing is ever half-published to sweep.
 */
export class FileBackend implements ContentBackend {
  readonly location: string;

  constructor(readonly root: string) {
    this.location = `file:${root}`;
  }

  async publish(id: string, stagedDir: string): Promise<PublishResult> {
    const final = this.dirOf(id);
    if (fs.existsSync(final)) throw new DrmError('CONFLICT', `content ${id} already exists in ${this.root}`);
    const names = filesUnder(stagedDir);
    const bytes = names.reduce((sum, n) => sum + fs.statSync(path.join(stagedDir, n)).size, 0);
    fs.mkdirSync(this.root, { recursive: true, mode: 0o700 });
    fs.renameSync(stagedDir, final);
    return { files: names.length, bytes, multipart: 0 };
  }

  async has(id: string): Promise<boolean> {
    return fs.existsSync(this.dirOf(id)) && !fs.existsSync(path.join(this.dirOf(id), PUBLISHING));
  }

  async names(id: string): Promise<string[]> {
    if (!(await this.has(id))) throw new DrmError('NOT_FOUND', `content ${id} is not in the store`);
    return filesUnder(this.dirOf(id)).filter((n) => !n.startsWith('.'));
  }

  async read(id: string, name: string): Promise<Buffer> {
    return fs.readFileSync(this.fileOf(id, name));
  }

  /** On the segment path: one asynchronous stat, no other check of the disk. */
  async stream(id: string, name: string) {
    const file = this.pathOf(id, name);
    const stat = await fs.promises.stat(file).catch(() => undefined);
    if (!stat?.isFile()) throw new DrmError('NOT_FOUND', `no file ${name} in content ${id}`);
    return { body: fs.createReadStream(file), bytes: stat.size };
  }

  async signedUrl(): Promise<undefined> {
    return undefined;
  }

  async remove(id: string): Promise<void> {
    const dir = this.dirOf(id);
    if (!fs.existsSync(dir)) return;
    // Out of the way first (one rename), so that the item is gone at once however long the delete takes.
    const aside = path.join(this.root, `.removed-${id}-${process.pid}`);
    fs.renameSync(dir, aside);
    fs.rmSync(aside, { recursive: true, force: true });
  }

  async sweep(): Promise<number> {
    return 0;
  }

  private dirOf(id: string): string {
    // A storage path may have folders (content/<id>), never `..` or a hidden part.
    if (!isItemFileName(id)) throw new DrmError('NOT_FOUND', `no content ${JSON.stringify(id)}`);
    return path.join(this.root, id);
  }

  private pathOf(id: string, name: string): string {
    if (!isItemFileName(name)) throw new DrmError('NOT_FOUND', `no file ${JSON.stringify(name)} in content ${id}`);
    return path.join(this.dirOf(id), name);
  }

  private fileOf(id: string, name: string): string {
    const file = this.pathOf(id, name);
    if (!fs.existsSync(file)) throw new DrmError('NOT_FOUND', `no file ${name} in content ${id}`);
    return file;
  }
}
