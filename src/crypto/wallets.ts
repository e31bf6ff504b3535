import { createHmac } from 'node:crypto';
import { deriveKey } from './secret.js';

export type Address = `0x${string}`;
export type DeriveAddress = (accountIndex: number, addressIndex: number) => Address;

/** secp256k1's group order: private keys are the numbers 1 … n − 1. */
const CURVE_ORDER = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;

interface AccountNode {
  privateKey: bigint;
  /** compressed, 33 bytes */
  publicKey: Buffer;
  chainCode: Buffer;
}

/**
 * BIP-32's private child key of a non-hardened index: (IL + k_parent) mod n, IL from
 * HMAC-SHA512(chain code, K_parent ‖ index).
 */
function childPrivateKey(node: AccountNode, index: number): Address {
  if (!Number.isInteger(index) || index < 0 || index >= 2 ** 31)
    throw new RangeError(`wallet index ${index} is not a non-hardened BIP-32 index`);
  const data = Buffer.alloc(37);
  node.publicKey.copy(data, 0);
  data.writeUInt32BE(index, 33);
  const tweak = BigInt(
    `0x${createHmac('sha512', node.chainCode).update(data).digest().subarray(0, 32).toString('hex')}`,
  );
  const key = (tweak + node.privateKey) % CURVE_ORDER;
  // BIP-32: such an index (odds about 1 in 2^127) gives no key; HDKey throws there too.
  if (tweak >= CURVE_ORDER || key === 0n) throw new Error(`wallet index ${index} derives no valid key`);
  return `0x${key.toString(16).padStart(64, '0')}`;
}

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
    this.loading ??= Promise.all([import('viem/accounts'), import('viem')]).then(
      ([{ HDKey, privateKeyToAddress }, { toHex }]) => {
        const root = HDKey.fromMasterSeed(deriveKey(this.serverSecret, 'wallet-seed'));
        // The BIP-44 path m/44'/60'/account'/0/index (viem's hdKeyToAccount's) with the account's
        // node kept, and its last step done here (BIP-32's non-hardened child): the child's key is
        // the parent's plus a tweak from HMAC-SHA512, so one curve multiplication makes the address,
        // where HDKey.deriveChild would make the child's public key too (two).
        const accounts = new Map<number, AccountNode>();
        const nodeOf = (accountIndex: number): AccountNode => {
          let node = accounts.get(accountIndex);
          if (!node) {
            const hd = root.derive(`m/44'/60'/${accountIndex}'/0`);
            if (!hd.privateKey || !hd.publicKey || !hd.chainCode) throw new Error('account node without keys');
            node = {
              privateKey: BigInt(toHex(hd.privateKey)),
              publicKey: Buffer.from(hd.publicKey),
              chainCode: Buffer.from(hd.chainCode),
            };
            accounts.set(accountIndex, node);
          }
          return node;
        };
        return (accountIndex, addressIndex) => privateKeyToAddress(childPrivateKey(nodeOf(accountIndex), addressIndex));
      },
    );
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
