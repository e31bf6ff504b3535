import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { afterEach, describe, expect, it } from 'vitest';
import { receiveUpload, type UploadOptions } from '../../server/upload.js';
import { DrmError } from '../../src/errors.js';

const KIB = 1024;
const MIB = 1024 * KIB;

const dirs: string[] = [];
function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-upload-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A full collection, so that memory figures count what is live, not garbage not yet collected. */
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** A tiny app whose one route stores an upload and answers with what it stored. */
function makeApp(dir: string, maxFileBytes = MIB) {
  const options: UploadOptions = { dir, maxFileBytes, fileField: 'file', fields: ['contentId', 'contentType'] };
  const app = new Hono();
  app.post('/up', async (c) => {
    const u = await receiveUpload(c, options);
    // read back in chunks, so that the big upload's memory check measures the upload alone
    const hash = createHash('sha256');
    let head: Buffer | undefined;
    for await (const chunk of fs.createReadStream(u.path) as AsyncIterable<Buffer>) {
      head ??= Buffer.from(chunk.subarray(0, 16));
      hash.update(chunk);
    }
    return c.json({ ...u, head: head?.toString('hex') ?? '', sha256: hash.digest('hex') });
  });
  app.onError((err, c) => {
    if (err instanceof DrmError) {
      return c.json({ error: err.message, code: err.code }, err.status as ContentfulStatusCode);
    }
    return c.json({ error: String(err), code: 'INTERNAL_ERROR' }, 500);
  });
  return app;
}

interface Stored {
  path: string;
  size: number;
  filename: string;
  fields: Record<string, string>;
  head: string;
  sha256: string;
}
interface Failure {
  error: string;
  code: string;
}

function form(parts: Record<string, string | Blob | [Blob, string]>): FormData {
  const fd = new FormData();
  for (const [name, v] of Object.entries(parts)) {
    if (Array.isArray(v)) fd.append(name, v[0], v[1]);
    else fd.append(name, v);
  }
  return fd;
}

const post = (app: Hono, body: BodyInit, headers?: Record<string, string>) =>
  app.request('/up', { method: 'POST', body, headers });

/**
 * Streams a multipart body of `total` random bytes (in 64 KiB chunks, from a ReadableStream with
 * duplex 'half') to `url` with fetch, in a child process; answers the status, the JSON body and
 * the sha256 of the file bytes sent.
 */
const CLIENT = [
  "import { createHash } from 'node:crypto';",
  'const [url, totalArg] = process.argv.slice(1);',
  'const total = Number(totalArg);',
  "const boundary = '----drm' + Math.random().toString(16).slice(2);",
  'const enc = new TextEncoder();',
  "const head = enc.encode('--' + boundary + '\\r\\nContent-Disposition: form-data; name=\"contentId\"\\r\\n\\r\\nc_big\\r\\n' +",
  '  \'--\' + boundary + \'\\r\\nContent-Disposition: form-data; name="file"; filename="leak.mp4"\\r\\nContent-Type: video/mp4\\r\\n\\r\\n\');',
  "const tail = enc.encode('\\r\\n--' + boundary + '--\\r\\n');",
  "const hash = createHash('sha256');",
  "let sent = 0; let state = 'head';",
  'const body = new ReadableStream({ pull(c) {',
  "  if (state === 'head') { c.enqueue(head); state = 'file'; }",
  "  else if (state === 'file') {",
  '    const part = crypto.getRandomValues(new Uint8Array(Math.min(65536, total - sent)));',
  "    hash.update(part); sent += part.length; c.enqueue(part); if (sent === total) state = 'tail';",
  '  } else { c.enqueue(tail); c.close(); }',
  '} });',
  "const res = await fetch(url, { method: 'POST', body, duplex: 'half',",
  "  headers: { 'content-type': 'multipart/form-data; boundary=' + boundary } });",
  "process.stdout.write(JSON.stringify({ status: res.status, body: await res.json(), sha256: hash.digest('hex') }));",
].join('\n');

function runClient(url: string, total: number): Promise<{ status: number; body: unknown; sha256: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--input-type=module', '-e', CLIENT, url, String(total)],
      { maxBuffer: MIB },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`upload client failed: ${stderr || err.message}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

describe('receiveUpload', () => {
  it('stores the file and the named fields (unknown fields ignored) with the right bytes', async () => {
    const dir = tempDir();
    const bytes = randomBytes(300 * KIB);
    const res = await post(
      makeApp(dir),
      form({
        contentId: 'c_123',
        other: 'ignored',
        file: [new Blob([bytes], { type: 'video/mp4' }), '../../etc/leak.mp4'],
        contentType: 'video',
      }),
    );
    expect(res.status).toBe(200);
    const u = (await res.json()) as Stored;
    expect(u.fields).toEqual({ contentId: 'c_123', contentType: 'video' });
    expect(u.size).toBe(bytes.length);
    expect(u.sha256).toBe(sha256(bytes));
    expect(u.head).toBe(bytes.subarray(0, 16).toString('hex'));
    expect(u.filename).toBe('leak.mp4');
    // written into dir under a name of its own, never the client's
    expect(path.dirname(u.path)).toBe(path.resolve(dir));
    expect(path.basename(u.path)).toMatch(/^[0-9a-f-]{36}\.upload$/);
    expect(fs.readdirSync(dir)).toEqual([path.basename(u.path)]);
  });

  it('accepts a file of exactly the limit', async () => {
    const dir = tempDir();
    const bytes = randomBytes(64 * KIB);
    const res = await post(makeApp(dir, 64 * KIB), form({ file: [new Blob([bytes]), 'a.bin'] }));
    expect(res.status).toBe(200);
    const u = (await res.json()) as Stored;
    expect(u.size).toBe(64 * KIB);
    expect(u.sha256).toBe(sha256(bytes));
  });

  it('answers 413 for a file over the limit, leaving no file in dir', async () => {
    const dir = tempDir();
    const res = await post(
      makeApp(dir, 64 * KIB),
      form({ contentId: 'c', file: [new Blob([randomBytes(64 * KIB + 1)]), 'big.mp4'] }),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 'PAYLOAD_TOO_LARGE', error: 'the file is larger than the 64 KiB limit' });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('answers 413 up front for a declared Content-Length over the limit, reading nothing', async () => {
    const dir = tempDir();
    let pulled = false;
    // highWaterMark 0: pulled only when someone reads
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          pulled = true;
          controller.close();
        },
      },
      { highWaterMark: 0 },
    );
    const res = await makeApp(dir, 4 * 1024 * MIB).request('/up', {
      method: 'POST',
      body,
      duplex: 'half',
      headers: {
        'content-type': 'multipart/form-data; boundary=xyz',
        'content-length': String(5 * 1024 * MIB),
      },
    } as RequestInit);
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ code: 'PAYLOAD_TOO_LARGE', error: 'the file is larger than the 4 GiB limit' });
    expect(pulled).toBe(false);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('answers 400 for a JSON body', async () => {
    const dir = tempDir();
    const res = await post(makeApp(dir), JSON.stringify({ contentId: 'c' }), { 'content-type': 'application/json' });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      code: 'BAD_REQUEST',
      error: 'expected a multipart/form-data body with a file field',
    });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('answers 400 for a form without a file', async () => {
    const dir = tempDir();
    const res = await post(makeApp(dir), form({ contentId: 'c', contentType: 'video' }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as Failure;
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.error).toMatch(/no file/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('answers 400 for an empty file, leaving no file in dir', async () => {
    const dir = tempDir();
    const res = await post(makeApp(dir), form({ contentId: 'c', file: [new Blob([]), 'empty.mp4'] }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 'BAD_REQUEST', error: 'the file is empty' });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('answers 400 for two files, leaving no file in dir', async () => {
    const dir = tempDir();
    const fd = new FormData();
    fd.append('file', new Blob([randomBytes(100 * KIB)]), 'one.mp4');
    fd.append('file', new Blob([randomBytes(100 * KIB)]), 'two.mp4');
    const res = await post(makeApp(dir), fd);
    expect(res.status).toBe(400);
    const body = (await res.json()) as Failure;
    expect(body.code).toBe('BAD_REQUEST');
    expect(body.error).toMatch(/more than one file/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('answers 400 for a truncated multipart body, leaving no file in dir', async () => {
    const dir = tempDir();
    const boundary = 'xyz123';
    const body = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="contentId"\r\n\r\nc_1\r\n` +
          `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.mp4"\r\n` +
          'Content-Type: video/mp4\r\n\r\n',
      ),
      randomBytes(200 * KIB),
      // ...and neither the part's end nor the closing boundary
    ]);
    const res = await post(makeApp(dir), body, { 'content-type': `multipart/form-data; boundary=${boundary}` });
    expect(res.status).toBe(400);
    const failure = (await res.json()) as Failure;
    expect(failure.code).toBe('BAD_REQUEST');
    expect(failure.error).toMatch(/^malformed multipart body/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('answers 400 for a field over 1 KiB', async () => {
    const dir = tempDir();
    const ok = await post(makeApp(dir), form({ contentId: 'x'.repeat(KIB), file: [new Blob(['abc']), 'a'] }));
    expect(ok.status).toBe(200);
    for (const f of fs.readdirSync(dir)) fs.rmSync(path.join(dir, f));

    const res = await post(makeApp(dir), form({ contentId: 'x'.repeat(KIB + 1), file: [new Blob(['abc']), 'a'] }));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ code: 'BAD_REQUEST', error: 'the field "contentId" is longer than 1 KiB' });
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('answers 413 over real HTTP for a body without a length that runs past the limit, and serves on', async () => {
    const dir = tempDir();
    const server = serve({ fetch: makeApp(dir, MIB).fetch, port: 0, hostname: '127.0.0.1' });
    try {
      await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', resolve)));
      const { port } = server.address() as AddressInfo;
      const send = (fileBytes: number) => {
        const fd = form({ file: [new Blob([randomBytes(fileBytes)]), 'a.mp4'] });
        // a stream body: sent chunked, without a Content-Length for the up-front check
        const res = new Response(fd);
        return fetch(`http://127.0.0.1:${port}/up`, {
          method: 'POST',
          body: res.body,
          duplex: 'half',
          headers: { 'content-type': res.headers.get('content-type') ?? '' },
        } as RequestInit);
      };
      const over = await send(8 * MIB);
      expect(over.status).toBe(413);
      expect(await over.json()).toEqual({
        code: 'PAYLOAD_TOO_LARGE',
        error: 'the file is larger than the 1 MiB limit',
      });
      expect(fs.readdirSync(dir)).toEqual([]);

      const ok = await send(1000);
      expect(ok.status).toBe(200);
      expect(((await ok.json()) as Stored).size).toBe(1000);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('streams a 48 MiB upload over real HTTP to disk without holding it in memory', async () => {
    const dir = tempDir();
    const total = 48 * MIB;
    const app = makeApp(dir, 64 * MIB);
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
    let sampler: NodeJS.Timeout | undefined;
    try {
      await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', resolve)));
      const { port } = server.address() as AddressInfo;

      // The server's live memory (after a full collection), sampled while the body streams in.
      const memory = () => {
        collectGarbage();
        const m = process.memoryUsage();
        return m.heapUsed + m.arrayBuffers;
      };
      const before = memory();
      let peak = before;
      // A full collection per sample is the cost of this test: every 100 ms still sees a whole
      // body (48 MiB arrive in several seconds even on a fast machine) and leaves a loaded CI
      // machine time for the upload itself.
      sampler = setInterval(() => {
        peak = Math.max(peak, memory());
      }, 100);

      // The client runs in a process of its own: fetch keeps the chunks it sent alive until the
      // request is gone, which would count against the server here.
      const client = await runClient(`http://127.0.0.1:${port}/up`, total);
      clearInterval(sampler);
      peak = Math.max(peak, memory());

      expect(client.status).toBe(200);
      const u = client.body as Stored;
      expect(u.size).toBe(total);
      expect(u.fields).toEqual({ contentId: 'c_big' });
      expect(u.filename).toBe('leak.mp4');
      expect(u.sha256).toBe(client.sha256);
      expect(fs.statSync(u.path).size).toBe(total);
      // a body held whole would have added 48 MiB or more
      expect(peak - before).toBeLessThan(24 * MIB);
    } finally {
      clearInterval(sampler);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    // Under load on a shared 2-core CI machine this took longer than the default 30 s.
  }, 180_000);
});
