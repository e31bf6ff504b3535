import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The bench's S3-compatible store: s3rver (test/helpers/s3.ts) in a child process of its own, so
// that what it spends shows in its own /proc/<pid>/stat and not in the server's or the load
// generator's. The child's temporary directory goes under `work`, which the bench removes.

export interface StoreProcess {
  endpoint: string;
  bucket: string;
  pid: number;
  /** what `drm` needs to use the bucket (s3rver's own credentials) */
  env: NodeJS.ProcessEnv;
  stop(): Promise<void>;
}

const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), 's3rver-child.ts');

export function startStore(work: string, bucket = 'drm-bench', prefix = 'content'): Promise<StoreProcess> {
  const credentials = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, bucket], {
    env: { ...process.env, ...credentials, TMPDIR: work },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (!out.includes('\n')) return;
      const { endpoint } = JSON.parse(out.split('\n')[0] as string) as { endpoint: string };
      resolve({
        endpoint,
        bucket,
        pid: child.pid as number,
        env: { ...credentials, DRM_STORE: `s3://${bucket}/${prefix}`, DRM_S3_ENDPOINT: endpoint },
        async stop() {
          child.kill('SIGTERM');
          const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(kill);
        },
      });
    });
    void exited.then(() => reject(new Error(`s3rver exited before it listened: ${out}`)));
  });
}
