import { Readable } from 'node:stream';
import type { Context as HonoContext } from 'hono';

/**
 * A stored file as a response body, streamed with its length (never read whole). `onClose`
 * learns how many bytes passed, which the socket's backpressure paces: what was sent.
 */
export function streamBody(
  c: HonoContext,
  file: { body: Readable; bytes: number },
  headers: Record<string, string>,
  onClose?: (bytesSent: number) => void,
): Response {
  let sent = 0;
  if (onClose) {
    file.body.on('data', (chunk: Buffer) => {
      sent += chunk.length;
    });
    file.body.once('close', () => onClose(sent));
  }
  return c.body(Readable.toWeb(file.body) as ReadableStream, 200, { ...headers, 'Content-Length': String(file.bytes) });
}
