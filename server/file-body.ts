import fs from 'node:fs';
import { Readable } from 'node:stream';
import type { Context as HonoContext } from 'hono';

/**
 * A file on disk as a response body, streamed with its length (never read whole). `onClose`
 * learns how many bytes were read out, which the socket's backpressure paces: what was sent.
 */
export async function fileBody(
  c: HonoContext,
  file: string,
  headers: Record<string, string>,
  onClose?: (bytesRead: number) => void,
): Promise<Response> {
  const { size } = await fs.promises.stat(file);
  const stream = fs.createReadStream(file);
  if (onClose) stream.once('close', () => onClose(stream.bytesRead));
  return c.body(Readable.toWeb(stream) as ReadableStream, 200, { ...headers, 'Content-Length': String(size) });
}
