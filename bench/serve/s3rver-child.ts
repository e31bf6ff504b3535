// s3rver in a process of its own for bench:serve (./store.ts starts it): its CPU is then its own,
// not the server's, and it never shares the load generator's event loop. Prints one JSON line
// {endpoint, bucket} once the bucket exists; closes and removes its directory on SIGTERM.
import { startS3 } from '../../test/helpers/s3.js';

const s3 = await startS3(process.argv[2] ?? 'drm-bench');
process.stdout.write(`${JSON.stringify({ endpoint: s3.endpoint, bucket: s3.bucket })}\n`);
process.once('SIGTERM', () => {
  void s3.close().finally(() => process.exit(0));
});
