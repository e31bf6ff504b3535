import { describe, expect, it } from 'vitest';
import { deriveKey } from '../../src/crypto/secret.js';
import { seal, unseal } from '../../src/crypto/sealed.js';
import { generateApiKey, hashApiKey, looksLikeApiKey, randomBase62, safeEqual } from '../../src/crypto/tokens.js';
import { HDKey, hdKeyToAccount } from 'viem/accounts';
import { isEvmAddress, WalletFactory } from '../../src/crypto/wallets.js';
import { isPrivateAddress } from '../../src/domain/webhooks/url-policy.js';

describe('secrets and identifiers', () => {
  it('API keys are drm_live_ and 40 base62 characters, different every time', () => {
    const keys = new Set(Array.from({ length: 200 }, generateApiKey));
    expect(keys.size).toBe(200);
    for (const k of keys) {
      expect(k).toMatch(/^drm_live_[0-9A-Za-z]{40}$/);
      expect(looksLikeApiKey(k)).toBe(true);
    }
    expect(looksLikeApiKey('drm_live_short')).toBe(false);
    expect(looksLikeApiKey(`drm_live_${'a'.repeat(38)}'; drop`)).toBe(false);
  });

  it('base62 draws use every character about equally (no modulo bias)', () => {
    const counts = new Map<string, number>();
    for (const ch of randomBase62(62_000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(n).toBeGreaterThan(800);
  });

  it('stores keys as SHA-256 hashes and compares secrets in constant time', () => {
    expect(hashApiKey('drm_live_x')).toMatch(/^[0-9a-f]{64}$/);
    expect(safeEqual('abc', 'abc')).toBe(true);
    expect(safeEqual('abc', 'abd')).toBe(false);
    expect(safeEqual('abc', 'abcd')).toBe(false);
  });

  it('sealed secrets open with the same key only, and tampering is detected', () => {
    const key = deriveKey(Buffer.from('s'.repeat(32)), 'seal');
    const sealed = seal(key, 'webhook-secret');
    expect(sealed).not.toContain('webhook-secret');
    expect(unseal(key, sealed)).toBe('webhook-secret');
    expect(() => unseal(deriveKey(Buffer.from('t'.repeat(32)), 'seal'), sealed)).toThrow();
    const raw = Buffer.from(sealed, 'base64');
    raw[raw.length - 1] = (raw[raw.length - 1] as number) ^ 1;
    expect(() => unseal(key, raw.toString('base64'))).toThrow();
  });

  it('generated wallets are derived by index: stable, distinct, and separate per kind', async () => {
    const a = new WalletFactory(Buffer.from('x'.repeat(32)));
    const b = new WalletFactory(Buffer.from('x'.repeat(32)));
    const a05 = await a.address(0, 5);
    expect(a05).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(await b.address(0, 5)).toBe(a05);
    expect(await a.address(0, 6)).not.toBe(a05);
    expect(await a.address(1, 5)).not.toBe(a05);
    expect(await new WalletFactory(Buffer.from('y'.repeat(32))).address(0, 5)).not.toBe(a05);
  });

  it("derives the addresses of BIP-44's m/44'/60'/account'/0/index, as viem's hdKeyToAccount does from the same seed", async () => {
    const secret = Buffer.from('z'.repeat(32));
    const root = HDKey.fromMasterSeed(deriveKey(secret, 'wallet-seed'));
    const factory = new WalletFactory(secret);
    for (const accountIndex of [0, 1]) {
      for (const addressIndex of [0, 1, 77, 4095, 2 ** 31 - 1]) {
        expect(await factory.address(accountIndex, addressIndex)).toBe(
          hdKeyToAccount(root, { accountIndex, addressIndex }).address,
        );
      }
    }
  });

  it.each([
    ['0x52908400098527886E0F7030069857D2E4169EE7', true],
    ['0xde709f2102306220921060314715629080e2fb77', true],
    ['0x52908400098527886E0F7030069857D2E4169EE', false],
    ['52908400098527886E0F7030069857D2E4169EE7', false],
    ['0xZZ908400098527886E0F7030069857D2E4169EE7', false],
  ])('%s is an EVM address: %s', (value, expected) => {
    expect(isEvmAddress(value)).toBe(expected);
  });

  it.each([
    ['127.0.0.1', true],
    ['10.1.2.3', true],
    ['172.20.0.1', true],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['::1', true],
    ['[::1]', true],
    ['fd00::1', true],
    ['fe80::1', true],
    ['::ffff:127.0.0.1', true],
    ['8.8.8.8', false],
    ['2001:4860:4860::8888', false],
    ['example.com', false],
  ])('webhook address %s is private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });
});
