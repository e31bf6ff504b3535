import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { s3Client } from '../../src/storage/s3-store.js';

export interface TestS3 {
  endpoint: string;
  bucket: string;
  close(): Promise<void>;
}

/**
 * A real S3 server (s3rver, in this process) on a free loopback port with one empty bucket. The
 * SDK takes its credentials from the environment, as in production: s3rver's own pair is set.
 */
export async function startS3(bucket = 'drm-test'): Promise<TestS3> {
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  await s3Client({ endpoint }).send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    endpoint,
    bucket,
    async close() {
      await server.close();
      fs.rmSync(directory, { recursive: true, force: true });
    },
  };
}
