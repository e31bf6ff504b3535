import type { Duplex } from 'node:stream';

/** The parser's code for a request line or headers over Node's --max-http-header-size. */
const HEADER_OVERFLOW = 'HPE_HEADER_OVERFLOW';

/**
 * Answers a request that Node's HTTP parser refused before any handler saw it (headers over the
 * limit, a malformed request line) with the spec's error body instead of Node's bare status line,
 * then closes the connection: the parser cannot go on after such an error.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  // A response already under way, or a peer that went away, leaves nothing to answer.
  const busy = (socket as Duplex & { _httpMessage?: unknown })._httpMessage;
  if (err.code === 'ECONNRESET' || busy || !socket.writable) {
    socket.destroy();
    return;
  }
  const tooLarge = err.code === HEADER_OVERFLOW;
  const status = tooLarge ? 431 : 400;
  const body = JSON.stringify(
    tooLarge
      ? { error: 'the request line or headers are larger than the server accepts', code: 'REQUEST_HEADERS_TOO_LARGE', status }
      : { error: 'malformed HTTP request', code: 'BAD_REQUEST', status },
  );
  const reason = tooLarge ? 'Request Header Fields Too Large' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
