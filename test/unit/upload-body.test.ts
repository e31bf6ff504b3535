import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import busboy from 'busboy';
import { describe, expect, it } from 'vitest';
import { multipartWithFile } from '../../commands/upload-body.js';

// Drm analyze --server shows the upload's percent, so the leak goes up as a
// multipart body of its own that counts the bytes read from disk.

describe('the upload body of drm analyze --server', () => {
  it('is multipart that a server parses into the fields and the file, with its length declared and its bytes counted', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-upload-'));
    const file = path.join(dir, 'le"ak\n.ts');
    const bytes = Buffer.alloc(3_500_000, 7);
    fs.writeFileSync(file, bytes);
    const seen: Array<[number, number]> = [];
    const upload = multipartWithFile(
      [
        ['contentId', 'abc'],
        ['contentType', 'video'],
      ],
      file,
      (sent, total) => seen.push([sent, total]),
    );
    const raw = Buffer.from(await new Response(upload.body).arrayBuffer());
    expect(raw.length).toBe(upload.bytes);
    expect(upload.headers['content-length']).toBe(String(raw.length));

    const fields: Record<string, string> = {};
    const files: Array<{ name: string; data: Buffer }> = [];
    await new Promise<void>((resolve, reject) => {
      const parser = busboy({ headers: { 'content-type': upload.headers['content-type'] as string } });
      parser.on('field', (name: string, value: string) => {
        fields[name] = value;
      });
      parser.on('file', (_name, stream, info) => {
        const chunks: Buffer[] = [];
        stream
          .on('data', (c: Buffer) => chunks.push(c))
          .on('end', () => files.push({ name: info.filename ?? '', data: Buffer.concat(chunks) }));
      });
      parser.on('close', resolve).on('error', reject);
      Readable.from([raw]).pipe(parser);
    });
    expect(fields).toEqual({ contentId: 'abc', contentType: 'video' });
    expect(files).toHaveLength(1);
    expect(files[0]?.name).toBe('le_ak_.ts');
    expect(files[0]?.data.equals(bytes)).toBe(true);
    expect(seen.length).toBeGreaterThan(1);
    expect(seen.at(-1)).toEqual([bytes.length, bytes.length]);
    expect(seen.every(([sent], i) => i === 0 || sent > (seen[i - 1] as [number, number])[0])).toBe(true);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
