import { Readable } from 'node:stream';
import type { Context as HonoContext } from 'hono';
import type { AppEnv } from './env.js';

/**
 * A stored file as a response body, streamed with its length (never read whole). `onClose`
 * learns how many bytes passed, which the socket's backpressure paces: what was sent.
 */
export function streamBody(
  c: HonoContext<AppEnv>,
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
  // The request's own headers (its id) go in now: added after, they would make the answer again.
  const all = { ...c.get('answerHeaders'), ...headers, 'Content-Length': String(file.bytes) };
  return c.body(Readable.toWeb(file.body) as ReadableStream, 200, all);
}
