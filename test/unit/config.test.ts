import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseByteSize, resolveConfig } from '../../src/config.js';

describe('server configuration', () => {
  it('defaults to SQLite in ./drm-data, 127.0.0.1:8080, shape b', () => {
    const c = resolveConfig({}, {});
    expect(c.dataDir).toBe(path.resolve('drm-data'));
    expect(c.db).toBe(`sqlite:${path.resolve('drm-data', 'drm.db')}`);
    expect(c).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      apiShape: 'b',
      trustProxy: false,
      allowPrivateWebhooks: false,
    });
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

  it('takes the forensic upload limit as a size with a unit (default 4 GiB) and 1 or 2 analyses at once', () => {
    expect(resolveConfig({}, {})).toMatchObject({ maxUploadBytes: 4 * 1024 ** 3, analysisConcurrency: 1 });
    expect(resolveConfig({ maxUpload: '500M', analysisConcurrency: '2' }, {})).toMatchObject({
      maxUploadBytes: 500 * 1024 ** 2,
      analysisConcurrency: 2,
    });
    expect(resolveConfig({}, { DRM_MAX_UPLOAD: '1048576', DRM_ANALYSIS_CONCURRENCY: '2' })).toMatchObject({
      maxUploadBytes: 1048576,
      analysisConcurrency: 2,
    });
    expect(parseByteSize('64k', 'x')).toBe(65536);
    expect(parseByteSize('1.5GiB', 'x')).toBe(1.5 * 1024 ** 3);
    for (const bad of ['', 'lots', '-1', '0', '4X'])
      expect(() => parseByteSize(bad, '--max-upload')).toThrow(/--max-upload must be/);
    expect(() => resolveConfig({ analysisConcurrency: '3' }, {})).toThrow(/--analysis-concurrency must be 1 or 2/);
    expect(resolveConfig({}, {}).analysisLeaseMs).toBe(120_000);
    expect(resolveConfig({}, { DRM_ANALYSIS_LEASE_SECONDS: '5' }).analysisLeaseMs).toBe(5000);
    expect(() => resolveConfig({}, { DRM_ANALYSIS_LEASE_SECONDS: '1' })).toThrow(/DRM_ANALYSIS_LEASE_SECONDS must be/);
  });

  it('names a viewer at an identification figure of 1e-6 unless told otherwise, never above 1e-3', () => {
    expect(resolveConfig({}, {}).strongBelow).toBe(1e-6);
    expect(resolveConfig({ strongBelow: '1e-9' }, {}).strongBelow).toBe(1e-9);
    expect(resolveConfig({}, { DRM_STRONG_BELOW: '1e-4' }).strongBelow).toBe(1e-4);
    for (const bad of ['0.01', '0', 'often', '-1e-6'])
      expect(() => resolveConfig({ strongBelow: bad }, {})).toThrow(
        /--strong-below must be a probability from 1e-12 to 1e-3/,
      );
  });

  it('keeps analysed leaks 90 days unless told otherwise (days or hours; 0 deletes them at once)', () => {
    const day = 86_400_000;
    expect(resolveConfig({}, {}).keepLeaksMs).toBe(90 * day);
    expect(resolveConfig({ keepLeaks: '365d' }, {}).keepLeaksMs).toBe(365 * day);
    expect(resolveConfig({}, { DRM_KEEP_LEAKS: '36h' }).keepLeaksMs).toBe(36 * 3_600_000);
    expect(resolveConfig({ keepLeaks: '0' }, {}).keepLeaksMs).toBe(0);
    for (const bad of ['90', 'forever', '-1d', '3651d', '1w'])
      expect(() => resolveConfig({ keepLeaks: bad }, {})).toThrow(/--keep-leaks must be/);
  });
});
