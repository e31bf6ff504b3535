import { deriveKey } from './secret.js';

export type Address = `0x${string}`;
export type DeriveAddress = (accountIndex: number, addressIndex: number) => Address;

/**
 * Wallets the service makes (an organization's deposit address, a viewer's wallet) are derived
 * from one master seed kept with the server secret, by index on a BIP-44 path; so no per-wallet
 * private key is ever stored, and the same index always gives the same address.
 * viem's HD code is loaded on first use: most commands never derive a wallet, and it is the
 * heaviest import of a CLI start.
 */
export class WalletFactory {
  private loading: Promise<DeriveAddress> | undefined;

  constructor(private readonly serverSecret: Buffer) {}

  /** A synchronous deriver, for use inside a transaction once loaded. */
  deriver(): Promise<DeriveAddress> {
    this.loading ??= Promise.all([import('viem/accounts'), import('viem')]).then(([{ HDKey, privateKeyToAddress }, { toHex }]) => {
      const root = HDKey.fromMasterSeed(deriveKey(this.serverSecret, 'wallet-seed'));
      // The BIP-44 path m/44'/60'/account'/0/index (viem's hdKeyToAccount's) with the account's
      // node kept: only the last step is derived per address, 2 curve multiplications instead of 6.
      const accounts = new Map<number, InstanceType<typeof HDKey>>();
      return (accountIndex, addressIndex) => {
        let account = accounts.get(accountIndex);
        if (!account) {
          account = root.derive(`m/44'/60'/${accountIndex}'/0`);
          accounts.set(accountIndex, account);
        }
        const child = account.deriveChild(addressIndex);
        if (!child.privateKey) throw new Error('derived wallet without a private key');
        return privateKeyToAddress(toHex(child.privateKey));
      };
    });
    return this.loading;
  }

  /** accountIndex separates kinds of wallets (0 organizations, 1 viewers) so their indexes never meet. */
  async address(accountIndex: number, addressIndex: number): Promise<Address> {
    return (await this.deriver())(accountIndex, addressIndex);
  }
}

export const ORGANIZATION_WALLETS = 0;
export const VIEWER_WALLETS = 1;

/** 0x and 40 hex digits; mixed case is accepted as given (an EIP-55 checksum is not required). */
export function isEvmAddress(value: string): boolean {
  return /^0x[0-9a-fA-F]{40}$/.test(value);
}
