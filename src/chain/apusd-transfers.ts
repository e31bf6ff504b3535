/**
 * Reads an APUSD token's Transfer events from an EVM node over JSON-RPC (viem). The token has 6
 * decimals, so a transfer's value is already micro-APUSD. viem is loaded on first use.
 */
export interface Transfer {
  txHash: string;
  logIndex: number;
  blockNumber: number;
  blockHash: string;
  from: string;
  to: string;
  /** token units of 10^-6 APUSD: micro-APUSD */
  value: bigint;
}

export interface ChainReader {
  chainId(): Promise<number>;
  head(): Promise<number>;
  /** Transfer events of the token in blocks from … to (inclusive), in chain order. */
  transfers(fromBlock: number, toBlock: number): Promise<Transfer[]>;
  /** The hash of the block at a height on the chain as it is now (lower case), or undefined past the head. */
  blockHash(number: number): Promise<string | undefined>;
  /**
   * Where a transfer is now (same transaction, same log index): its block, or undefined when it is no longer on the
   * chain.
   */
  whereIs(txHash: string, logIndex: number): Promise<{ blockNumber: number; blockHash: string } | undefined>;
}

const TRANSFER = {
  type: 'event',
  name: 'Transfer',
  inputs: [
    { type: 'address', name: 'from', indexed: true },
    { type: 'address', name: 'to', indexed: true },
    { type: 'uint256', name: 'value', indexed: false },
  ],
} as const;

export function apusdReader(rpcUrl: string, token: string): ChainReader {
  const client = import('viem').then(({ createPublicClient, http }) =>
    createPublicClient({ transport: http(rpcUrl, { retryCount: 2, timeout: 15_000 }) }),
  );
  return {
    chainId: async () => (await client).getChainId(),
    head: async () => Number(await (await client).getBlockNumber()),
    async blockHash(number) {
      // Only a block the node does not have is "none"; any other failure (a timeout, a 429) is thrown.
      const block = await (await client)
        .getBlock({ blockNumber: BigInt(number) })
        .catch(absentWhen('BlockNotFoundError'));
      return block?.hash?.toLowerCase();
    },
    async whereIs(txHash, logIndex) {
      const receipt = await (await client)
        .getTransactionReceipt({ hash: txHash as `0x${string}` })
        .catch(absentWhen('TransactionReceiptNotFoundError'));
      if (receipt?.status !== 'success') return undefined;
      const log = receipt.logs.find((l) => l.logIndex === logIndex && l.address.toLowerCase() === token.toLowerCase());
      return log ? { blockNumber: Number(receipt.blockNumber), blockHash: receipt.blockHash.toLowerCase() } : undefined;
    },
    async transfers(fromBlock, toBlock) {
      const logs = await (await client).getLogs({
        address: token as `0x${string}`,
        event: TRANSFER,
        fromBlock: BigInt(fromBlock),
        toBlock: BigInt(toBlock),
      });
      return logs
        .filter(
          (l) =>
            l.transactionHash &&
            l.blockHash &&
            l.blockNumber !== null &&
            l.logIndex !== null &&
            l.args.to &&
            l.args.from &&
            l.args.value !== undefined,
        )
        .map((l) => ({
          txHash: (l.transactionHash as string).toLowerCase(),
          logIndex: Number(l.logIndex),
          blockNumber: Number(l.blockNumber),
          blockHash: (l.blockHash as string).toLowerCase(),
          from: (l.args.from as string).toLowerCase(),
          to: (l.args.to as string).toLowerCase(),
          value: l.args.value as bigint,
        }));
    },
  };
}

/** A catch that turns viem's "not found" error of that name into undefined, and rethrows the rest. */
const absentWhen =
  (name: string) =>
  (err: unknown): undefined => {
    if ((err as { name?: string }).name === name) return undefined;
    throw err;
  };
