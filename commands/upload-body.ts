import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';

export interface UploadBody {
  body: ReadableStream<Uint8Array>;
  headers: Record<string, string>;
  /** bytes of the whole request body */
  bytes: number;
}

/** A file name as a multipart header can carry it: no quote, backslash or line break. */
const headerSafe = (name: string) => name.replace(/["\\\r\n]/g, '_');

/**
 * A multipart/form-data body of some fields and then one file, streamed from disk with the count
 * of file bytes read so far reported as it goes (fetch's FormData gives no progress). Its length
 * is known up front, so the request carries a Content-Length and the server can refuse an upload
 * over its limit before reading it.
 */
export function multipartWithFile(
  fields: Array<[string, string]>,
  file: string,
  onSent: (sent: number, total: number) => void,
): UploadBody {
  const boundary = `----drm-${randomBytes(12).toString('hex')}`;
  const size = fs.statSync(file).size;
  const head = Buffer.from(
    fields
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('') +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; ` +
      `filename="${headerSafe(path.basename(file))}"\r\nContent-Type: ` +
      `application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  async function* parts() {
    yield head;
    let sent = 0;
    for await (const chunk of fs.createReadStream(file, { highWaterMark: 1 << 20 })) {
      sent += (chunk as Buffer).length;
      onSent(sent, size);
      yield chunk as Buffer;
    }
    yield tail;
  }
  return {
    body: Readable.toWeb(Readable.from(parts())) as ReadableStream<Uint8Array>,
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + size + tail.length),
    },
    bytes: head.length + size + tail.length,
  };
}
