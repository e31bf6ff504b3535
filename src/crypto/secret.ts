import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * The server secret signs admin tokens, keys the watermark patterns, seals stored secrets and
 * seeds generated wallets. It comes from DRM_SECRET, or is generated once into the data
 * directory (mode 0600) so that every `drm` command on the same data directory shares it.
 */
export function loadServerSecret(dataDir: string, env: NodeJS.ProcessEnv = process.env): Buffer {
  if (env.DRM_SECRET) {
    if (env.DRM_SECRET.length < 32) throw new Error('DRM_SECRET must be at least 32 characters');
    return Buffer.from(env.DRM_SECRET, 'utf8');
  }
  const file = path.join(dataDir, 'secret.key');
  fs.mkdirSync(dataDir, { recursive: true });
  try {
    // 'wx' fails if the file exists, so two processes starting at once keep one secret.
    fs.writeFileSync(file, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'utf8');
}

/** A sub-key for one purpose, so that no two uses of the secret share key material. */
export function deriveKey(secret: Buffer, purpose: string): Buffer {
  return createHmac('sha256', secret).update(`drm:${purpose}`).digest();
}
