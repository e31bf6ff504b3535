import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A load balancer in front of several `drm serve` processes, as small as a test needs: every
 * request goes to the first upstream that answers; one whose connection is refused (its server
 * died) is skipped from then on and the request is sent to the next. `beforeForward` runs before
 * each request is passed on (a test kills a server there, at a known point of a playback).
 */
export interface FailoverProxy {
  url: string;
  /** which upstream answered each request: its index, the request's path, the answer's status and body bytes */
  answered: Array<{ upstream: number; path: string; status: number; bytes: number }>;
  close(): Promise<void>;
}

export async function startFailoverProxy(
  upstreams: string[],
  beforeForward: (path: string) => Promise<void> = async () => {},
): Promise<FailoverProxy> {
  let current = 0;
  const answered: FailoverProxy['answered'] = [];
  const server = http.createServer(async (req, res) => {
    const body: Buffer[] = [];
    for await (const chunk of req) body.push(chunk as Buffer);
    await beforeForward(req.url ?? '/');
    for (;;) {
      const upstream = upstreams[current];
      if (upstream === undefined) {
        res.writeHead(502).end('no upstream left');
        return;
      }
      try {
        const { status, bytes } = await forward(upstream, req, Buffer.concat(body), res);
        answered.push({ upstream: current, path: req.url ?? '/', status, bytes });
        return;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ECONNREFUSED') {
          res.destroy(err as Error);
          return;
        }
        current++;
      }
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    answered,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Sends one request on a fresh connection (no pooled socket to a dead server) and pipes the answer back. */
function forward(
  upstream: string,
  req: http.IncomingMessage,
  body: Buffer,
  res: http.ServerResponse,
): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const target = new URL(req.url ?? '/', upstream);
    const headers = { ...req.headers, host: target.host, 'x-forwarded-for': req.socket.remoteAddress ?? '127.0.0.1' };
    const out = http.request(target, { method: req.method, headers, agent: false }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      let bytes = 0;
      answer.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
      });
      answer.pipe(res);
      answer.on('end', () => resolve({ status: answer.statusCode ?? 502, bytes }));
      answer.on('error', reject);
    });
    out.on('error', reject);
    out.end(body);
  });
}
