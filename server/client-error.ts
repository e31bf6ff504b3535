import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** The parser's code for a request line or headers over Node's --max-http-header-size. */
const HEADER_OVERFLOW = 'HPE_HEADER_OVERFLOW';

/**
 * Answers a request that Node's HTTP parser refused (headers over the limit, a malformed request
 * line, a malformed chunked body) with the spec's error body instead of Node's bare status line or
 * silence, then closes the connection: the parser cannot go on after such an error. A body the
 * parser refuses arrives after its request went to the app, so a response may be in flight: it is
 * answered here unless that response has begun to go out.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  // A response already under way, or a peer that went away, leaves nothing to answer.
  if (err.code === 'ECONNRESET' || inFlight?.headersSent || !socket.writable) {
    socket.destroy();
    return;
  }
  if (err.code === HEADER_OVERFLOW) {
    const message = 'the request line or headers are larger than the server accepts';
    answerAndClose(socket, 431, 'Request Header Fields Too Large', 'REQUEST_HEADERS_TOO_LARGE', message);
  } else {
    answerAndClose(socket, 400, 'Bad Request', 'BAD_REQUEST', 'malformed HTTP request');
  }
}

/**
 * The 'connect' listener: this server is no proxy, so a CONNECT is a bad request. Node hands such
 * a request to this event only, and destroys the socket unanswered when nothing listens.
 */
export function answerConnect(req: IncomingMessage, socket: Duplex): void {
  const message = `${req.method} is not served here: this server is not a proxy`;
  answerAndClose(socket, 400, 'Bad Request', 'BAD_REQUEST', message);
}

/** Writes the spec's error body {error, code, status} as a whole response and closes the connection. */
function answerAndClose(socket: Duplex, status: number, reason: string, code: string, message: string): void {
  const body = JSON.stringify({ error: message, code, status });
  const head = [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  socket.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}
