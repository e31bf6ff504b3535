import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import type { SiweMessage } from 'viem/siwe';
import { grantAdmin } from '../../src/domain/admin/organizations.js';
import type { TestApp } from './context.js';

/** A fresh random wallet (a viem local account) for signing SIWE messages. */
export const newAccount = (): PrivateKeyAccount => privateKeyToAccount(generatePrivateKey());

/** GET /api/v1/admin/auth/nonce → the nonce. */
export async function getNonce(t: TestApp): Promise<string> {
  const res = await t.request('GET', '/api/v1/admin/auth/nonce');
  if (res.status !== 200) throw new Error(`nonce failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { nonce: string }).nonce;
}

/**
 * An EIP-4361 message for the account with a fresh nonce from the app: domain 'localhost' (the host
 * app.request reaches), uri http://localhost, chain 1, version 1, issued at the test clock's now.
 */
export async function siweMessage(
  t: TestApp,
  account: PrivateKeyAccount,
  overrides: Partial<SiweMessage> = {},
): Promise<string> {
  const nonce = overrides.nonce ?? (await getNonce(t));
  return createSiweMessage({
    domain: 'localhost',
    uri: 'http://localhost',
    chainId: 1,
    version: '1',
    address: account.address,
    issuedAt: new Date(t.clock.now()),
    statement: 'Sign in to the drm admin API',
    ...overrides,
    nonce,
  });
}

/** POST /api/v1/admin/auth/verify with a message signed by `signer` (the account itself unless given). */
export async function verifySignIn(t: TestApp, message: string, signer: PrivateKeyAccount): Promise<Response> {
  const signature = await signer.signMessage({ message });
  return t.request('POST', '/api/v1/admin/auth/verify', { body: { message, signature } });
}

/**
 * Grants the wallet admin (a fresh one unless given), signs in with SIWE and returns the bearer
 * token for the admin endpoints.
 */
export async function adminToken(t: TestApp, account: PrivateKeyAccount = newAccount()): Promise<string> {
  await grantAdmin(t.ctx, account.address);
  const res = await verifySignIn(t, await siweMessage(t, account), account);
  if (res.status !== 200) throw new Error(`admin sign-in failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}
