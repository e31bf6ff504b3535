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

/**
 * Streams a multipart/form-data request body to disk: the one file part into a new file in
 * `o.dir` (named by a random UUID, never by the client), the accepted text fields into memory.
 * The body is never held whole; backpressure from the disk paces the read. On any failure the
 * partial file is removed and the body stops being read before the DrmError is thrown.
 */
export async function receiveUpload(c: HonoContext, o: UploadOptions): Promise<Upload> {
  const contentType = c.req.header('content-type') ?? '';
  if (!/^multipart\/form-data\s*(;|$)/i.test(contentType)) {
    throw badRequest('expected a multipart/form-data body with a file field');
  }
  const declared = Number(c.req.header('content-length'));
  if (Number.isFinite(declared) && declared > o.maxFileBytes + ENVELOPE_MAX) throw tooLarge(o.maxFileBytes);
  const body = c.req.raw.body;
  if (!body) throw badRequest('expected a multipart/form-data body with a file field');

  let parser: busboy.Busboy;
  try {
    parser = busboy({
      headers: c.req.header(),
      // One byte over each limit, so that a file (a field) of exactly the limit is not cut.
      limits: { fileSize: o.maxFileBytes + 1, fieldSize: FIELD_MAX + 1, fields: FIELDS_MAX },
    });
  } catch (err) {
    throw classify(err);
  }
  const bb = parser;
  const source = Readable.fromWeb(body as unknown as WebReadableStream<Uint8Array>);

  return new Promise<Upload>((resolve, reject) => {
    let settled = false;
    let files = 0;
    let filename = '';
    let filePath: string | undefined;
    let out: fs.WriteStream | undefined;
    /** settles when the file part is on disk (or has failed, which `fail` then handles) */
    let written: Promise<void> = Promise.resolve();
    const fields: Record<string, string> = {};

    const fail = (err: unknown) => {
      if (settled) return;
      settled = true;
      const error = classify(err);
      // Deferred: busboy may be in the middle of emitting, and must finish that call first.
      process.nextTick(() => {
        source.unpipe(bb);
        source.destroy();
        bb.destroy();
        out?.destroy();
        const file = filePath;
        const stream = out;
        void (async () => {
          try {
            // The write stream opens its file asynchronously: remove it only once it is closed.
            if (stream) await whenClosed(stream);
            if (file) await fs.promises.rm(file, { force: true });
          } finally {
            reject(error);
          }
        })();
      });
    };

    source.on('error', (err) => fail(badRequest(`the upload was interrupted: ${err.message}`)));
    bb.on('error', fail);

    bb.on('file', (name, stream, info) => {
      // busboy destroys a file stream it is cut off in with an error: never leave that unheard.
      stream.on('error', ignore);
      files += 1;
      if (settled) return void stream.resume();
      if (files > 1) {
        stream.resume();
        return fail(badRequest(`the form has more than one file; send exactly one, in the "${o.fileField}" field`));
      }
      if (name !== o.fileField) {
        stream.resume();
        return fail(badRequest(`unexpected file field "${name}"; the file goes in the "${o.fileField}" field`));
      }
      filename = info.filename ?? '';
      filePath = path.resolve(o.dir, `${randomUUID()}.upload`);
      const target = fs.createWriteStream(filePath, { flags: 'wx' });
      target.on('error', ignore);
      out = target;
      stream.once('limit', () => fail(tooLarge(o.maxFileBytes)));
      written = pipeline(stream, target).then(() => whenClosed(target), fail);
    });

    bb.on('field', (name, value, info) => {
      if (settled) return;
      if (name === o.fileField) {
        return fail(badRequest(`"${o.fileField}" must be a file, not a text field`));
      }
      if (!o.fields.includes(name)) return;
      if (info.valueTruncated) return fail(badRequest(`the field "${name}" is longer than ${formatBytes(FIELD_MAX)}`));
      if (Object.hasOwn(fields, name)) return fail(badRequest(`the field "${name}" is given more than once`));
      fields[name] = value;
    });

    bb.on('fieldsLimit', () => fail(badRequest(`the form has more than ${FIELDS_MAX} text fields`)));

    bb.on('finish', () => {
      void written.then(() => {
        if (settled) return;
        if (!filePath || !out) {
          return fail(badRequest(`the form has no file; send it in the "${o.fileField}" field`));
        }
        if (out.bytesWritten === 0) return fail(badRequest('the file is empty'));
        settled = true;
        resolve({ path: filePath, size: out.bytesWritten, filename, fields });
      });
    });

    source.pipe(bb);
  });
}
