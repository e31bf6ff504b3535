import { HDKey, hdKeyToAccount } from 'viem/accounts';
import { isAddress } from 'viem';
import { deriveKey } from './secret.js';

/**
 * Wallets the service makes (an organization's deposit address, a viewer's wallet) are derived
 * from one master seed kept with the server secret, by index on a BIP-44 path; so no per-wallet
 * private key is ever stored, and the same index always gives the same address.
 */
export class WalletFactory {
  private readonly root: HDKey;

  constructor(serverSecret: Buffer) {
    this.root = HDKey.fromMasterSeed(deriveKey(serverSecret, 'wallet-seed'));
  }

  /** accountIndex separates kinds of wallets (0 organizations, 1 viewers) so their indexes never meet. */
  address(accountIndex: number, addressIndex: number): `0x${string}` {
    return hdKeyToAccount(this.root, { accountIndex, addressIndex }).address;
  }
}

export const ORGANIZATION_WALLETS = 0;
export const VIEWER_WALLETS = 1;

export function isEvmAddress(value: string): boolean {
  return isAddress(value, { strict: false });
}
