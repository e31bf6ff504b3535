import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveConfig } from '../../src/config.js';

describe('server configuration', () => {
  it('defaults to SQLite in ./drm-data, 127.0.0.1:8080, shape b', () => {
    const c = resolveConfig({}, {});
    expect(c.dataDir).toBe(path.resolve('drm-data'));
    expect(c.db).toBe(`sqlite:${path.resolve('drm-data', 'drm.db')}`);
    expect(c).toMatchObject({ port: 8080, host: '127.0.0.1', apiShape: 'b', trustProxy: false, allowPrivateWebhooks: false });
  });

  it('reads every setting from the environment, and flags win over it', () => {
    const env = {
      DRM_PORT: '9000',
      DRM_HOST: '0.0.0.0',
      DRM_DB: 'postgres://u@h/db',
      DRM_DATA_DIR: '/tmp/x',
      DRM_API_SHAPE: 'a',
      DRM_TRUST_PROXY: '1',
      DRM_ALLOW_PRIVATE_WEBHOOKS: 'true',
      DRM_PUBLIC_URL: 'https://drm.example.com',
      DRM_ADMIN_WALLETS: '0xAbC, 0xdef',
    };
    expect(resolveConfig({}, env)).toMatchObject({
      port: 9000,
      host: '0.0.0.0',
      db: 'postgres://u@h/db',
      dataDir: '/tmp/x',
      apiShape: 'a',
      trustProxy: true,
      allowPrivateWebhooks: true,
      publicUrl: 'https://drm.example.com',
      adminWallets: ['0xabc', '0xdef'],
    });
    expect(resolveConfig({ port: '7000', apiShape: 'b', trustProxy: false }, env)).toMatchObject({
      port: 7000,
      apiShape: 'b',
      trustProxy: false,
    });
  });

  it.each([
    [{ db: 'mysql://x' }, /--db must be/],
    [{ port: 'eighty' }, /--port must be/],
    [{ port: 70000 }, /--port must be/],
    [{ apiShape: 'c' }, /--api-shape must be a or b/],
    [{ publicUrl: 'not a url' }, /--public-url must be a URL/],
    [{ logLevel: 'loud' }, /--log-level/],
  ])('refuses %o with a message naming the option', (input, message) => {
    expect(() => resolveConfig(input, {})).toThrow(message);
  });
});
