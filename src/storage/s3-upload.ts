import fs from 'node:fs';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  type S3Client,
  UploadPartCommand,
} from '@aws-sdk/client-s3';

/** Parts of a multipart upload (S3 takes 5 MiB to 5 GiB; a part is held in memory while it goes). */
export const PART_BYTES = 8 * 1024 * 1024;

export interface PutOptions {
  /** stops the upload between requests and aborts the one in flight; a multipart upload is then aborted too */
  signal?: AbortSignal;
  /** bytes sent so far, after each request */
  onBytes?: (sent: number, total: number) => void;
}

/**
 * Puts one file as one object: in a single request up to a part's size, in parts above it (a
 * film's preview, a forensic reference, a leak), so that no request carries gigabytes and a
 * failed part is what is sent again. A multipart upload that fails or is stopped is aborted,
 * leaving nothing (a bucket keeps the parts of an upload never completed nor aborted, and bills them).
 */
export async function putFile(
  s3: S3Client,
  bucket: string,
  key: string,
  file: string,
  contentType: string,
  options: PutOptions = {},
): Promise<{ bytes: number; parts: number }> {
  const { signal, onBytes } = options;
  signal?.throwIfAborted();
  const bytes = fs.statSync(file).size;
  if (bytes <= PART_BYTES) {
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: key, Body: fs.readFileSync(file), ContentType: contentType }),
      { abortSignal: signal },
    );
    onBytes?.(bytes, bytes);
    return { bytes, parts: 1 };
  }
  const { UploadId } = await s3.send(
    new CreateMultipartUploadCommand({ Bucket: bucket, Key: key, ContentType: contentType }),
  );
  const fd = fs.openSync(file, 'r');
  try {
    const parts: Array<{ PartNumber: number; ETag?: string }> = [];
    for (let offset = 0, n = 1; offset < bytes; offset += PART_BYTES, n++) {
      signal?.throwIfAborted();
      const body = Buffer.alloc(Math.min(PART_BYTES, bytes - offset));
      fs.readSync(fd, body, 0, body.length, offset);
      const sent = await s3.send(
        new UploadPartCommand({ Bucket: bucket, Key: key, UploadId, PartNumber: n, Body: body }),
        { abortSignal: signal },
      );
      parts.push({ PartNumber: n, ETag: sent.ETag });
      onBytes?.(offset + body.length, bytes);
    }
    signal?.throwIfAborted();
    await s3.send(
      new CompleteMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId, MultipartUpload: { Parts: parts } }),
    );
    return { bytes, parts: parts.length };
  } catch (err) {
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: key, UploadId })).catch(() => {});
    throw err;
  } finally {
    fs.closeSync(fd);
  }
}
