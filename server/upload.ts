import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import busboy from 'busboy';
import type { Context as HonoContext } from 'hono';
import { asDrmError, badRequest, DrmError } from '../src/errors.js';

export interface UploadOptions {
  /** directory the file is written into (exists) */
  dir: string;
  /** the most bytes the file part may have; beyond it: PAYLOAD_TOO_LARGE */
  maxFileBytes: number;
  /** name of the file field (e.g. 'file') */
  fileField: string;
  /** text fields accepted (others are ignored); each at most 1 KiB */
  fields: readonly string[];
}

export interface Upload {
  /** absolute path of the written file; the caller owns it and removes it */
  path: string;
  size: number;
  /** the client's file name, for the record only (never used as a path) */
  filename: string;
  fields: Record<string, string>;
}

const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;

/** The most bytes a text field may have. */
const FIELD_MAX = KIB;
/** What the multipart framing and the text fields may add to the file in a declared length. */
const ENVELOPE_MAX = MIB;
/** The most text parts (known or not) a form may have. */
const FIELDS_MAX = 64;

/** Bytes in the largest binary unit that fits: "4 GiB", "1.5 MiB", "512 bytes". */
export function formatBytes(n: number): string {
  for (const [unit, name] of [
    [GIB, 'GiB'],
    [MIB, 'MiB'],
    [KIB, 'KiB'],
  ] as const) {
    if (n >= unit) {
      const v = n / unit;
      return `${Number.isInteger(v) ? v : Number(v.toFixed(1))} ${name}`;
    }
  }
  return `${n} ${n === 1 ? 'byte' : 'bytes'}`;
}

const tooLarge = (max: number) =>
  new DrmError('PAYLOAD_TOO_LARGE', `the file is larger than the ${formatBytes(max)} limit`);

/** Errors of the disk (a syscall failed) are ours; anything else a stream reports is the body's. */
function classify(err: unknown): DrmError {
  if (err instanceof DrmError) return err;
  if (err instanceof Error && 'syscall' in err) return asDrmError(err);
  const detail = err instanceof Error ? err.message : String(err);
  return badRequest(`malformed multipart body: ${detail.charAt(0).toLowerCase()}${detail.slice(1)}`);
}

const ignore = () => {};

function whenClosed(s: fs.WriteStream): Promise<void> {
  if (s.closed) return Promise.resolve();
  return new Promise((resolve) => s.once('close', () => resolve()));
}

/** A multipart parser reading the request's body, or the error that says why the body is not one. */
function openParser(c: HonoContext, o: UploadOptions): { bb: busboy.Busboy; source: Readable } {
  const contentType = c.req.header('content-type') ?? '';
  if (!/^multipart\/form-data\s*(;|$)/i.test(contentType)) {
    throw badRequest('expected a multipart/form-data body with a file field');
  }
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > o.maxFileBytes + ENVELOPE_MAX) throw tooLarge(o.maxFileBytes);
  const body = c.req.raw.body;
  if (!body) throw badRequest('expected a multipart/form-data body with a file field');
  let bb: busboy.Busboy;
  try {
    bb = busboy({
      headers: c.req.header(),
      // One byte over each limit, so that a file (a field) of exactly the limit is not cut.
      limits: { fileSize: o.maxFileBytes + 1, fieldSize: FIELD_MAX + 1, fields: FIELDS_MAX },
    });
  } catch (err) {
    throw classify(err);
  }
  return { bb, source: Readable.fromWeb(body as unknown as WebReadableStream<Uint8Array>) };
}

/** One upload being received: the parser's events in, one settled promise out. */
class UploadReceiver {
  private settled = false;
  private files = 0;
  private filename = '';
  private filePath: string | undefined;
  private out: fs.WriteStream | undefined;
  /** settles when the file part is on disk (or has failed, which `fail` then handles) */
  private written: Promise<void> = Promise.resolve();
  private readonly fields: Record<string, string> = {};

  constructor(
    private readonly o: UploadOptions,
    private readonly source: Readable,
    private readonly bb: busboy.Busboy,
    private readonly resolve: (upload: Upload) => void,
    private readonly reject: (err: DrmError) => void,
  ) {}

  fail(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    const error = classify(err);
    // Deferred: busboy may be in the middle of emitting, and must finish that call first.
    process.nextTick(() => {
      this.source.unpipe(this.bb);
      this.source.destroy();
      this.bb.destroy();
      this.out?.destroy();
      const file = this.filePath;
      const stream = this.out;
      void (async () => {
        try {
          // The write stream opens its file asynchronously: remove it only once it is closed.
          if (stream) await whenClosed(stream);
          if (file) await fs.promises.rm(file, { force: true });
        } finally {
          this.reject(error);
        }
      })();
    });
  }

  onFile(name: string, stream: Readable, info: busboy.FileInfo): void {
    const { o } = this;
    // busboy destroys a file stream it is cut off in with an error: never leave that unheard.
    stream.on('error', ignore);
    this.files += 1;
    const refusal = this.fileRefusal(name);
    if (this.settled || refusal) {
      stream.resume();
      if (refusal) this.fail(badRequest(refusal));
      return;
    }
    this.filename = info.filename ?? '';
    this.filePath = path.resolve(o.dir, `${randomUUID()}.upload`);
    const target = fs.createWriteStream(this.filePath, { flags: 'wx' });
    target.on('error', ignore);
    this.out = target;
    stream.once('limit', () => this.fail(tooLarge(o.maxFileBytes)));
    this.written = pipeline(stream, target).then(
      () => whenClosed(target),
      (err) => this.fail(err),
    );
  }

  /** Why a file part is refused, if it is: the form takes one file, in its named field. */
  private fileRefusal(name: string): string | undefined {
    const { fileField } = this.o;
    if (this.files > 1) return `the form has more than one file; send exactly one, in the "${fileField}" field`;
    if (name !== fileField) return `unexpected file field "${name}"; the file goes in the "${fileField}" field`;
    return undefined;
  }

  onField(name: string, value: string, info: busboy.FieldInfo): void {
    if (this.settled) return;
    const refusal = this.fieldRefusal(name, info);
    if (refusal) this.fail(badRequest(refusal));
    else if (this.o.fields.includes(name)) this.fields[name] = value;
  }

  /** Why a text field is refused, if it is; fields the form does not take are ignored, not refused. */
  private fieldRefusal(name: string, info: busboy.FieldInfo): string | undefined {
    const { o } = this;
    if (name === o.fileField) return `"${o.fileField}" must be a file, not a text field`;
    if (!o.fields.includes(name)) return undefined;
    if (info.valueTruncated) return `the field "${name}" is longer than ${formatBytes(FIELD_MAX)}`;
    if (Object.hasOwn(this.fields, name)) return `the field "${name}" is given more than once`;
    return undefined;
  }

  onFinish(): void {
    void this.written.then(() => {
      if (this.settled) return;
      if (!this.filePath || !this.out)
        this.fail(badRequest(`the form has no file; send it in the "${this.o.fileField}" field`));
      else if (this.out.bytesWritten === 0) this.fail(badRequest('the file is empty'));
      else {
        this.settled = true;
        this.resolve({
          path: this.filePath,
          size: this.out.bytesWritten,
          filename: this.filename,
          fields: this.fields,
        });
      }
    });
  }
}

/**
 * Streams a multipart/form-data request body to disk: the one file part into a new file in
 * `o.dir` (named by a random UUID, never by the client), the accepted text fields into memory.
 * The body is never held whole; backpressure from the disk paces the read. On any failure the
 * partial file is removed and the body stops being read before the DrmError is thrown.
 */
export async function receiveUpload(c: HonoContext, o: UploadOptions): Promise<Upload> {
  const { bb, source } = openParser(c, o);
  return new Promise<Upload>((resolve, reject) => {
    const receiver = new UploadReceiver(o, source, bb, resolve, reject);
    source.on('error', (err) => receiver.fail(badRequest(`the upload was interrupted: ${err.message}`)));
    bb.on('error', (err) => receiver.fail(err));
    bb.on('file', (name, stream, info) => receiver.onFile(name, stream, info));
    bb.on('field', (name, value, info) => receiver.onField(name, value, info));
    bb.on('fieldsLimit', () => receiver.fail(badRequest(`the form has more than ${FIELDS_MAX} text fields`)));
    bb.on('finish', () => receiver.onFinish());
    source.pipe(bb);
  });
}
