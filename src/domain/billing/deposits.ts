import type { ChainReader, Transfer } from '../../chain/apusd-transfers.js';
import type { ChainConfig } from '../../chain/config.js';
import type { Context } from '../../context.js';
import type { DepositRow, OrganizationRow } from '../../db/repos/index.js';
import { payOpenInvoices } from './autopay.js';
import { post } from './ledger.js';
import { rewindReorg } from './reorgs.js';

/** Wallets the service derives for deposits of organizations that registered with a wallet of their own. */
export const DEPOSIT_WALLETS = 2;
/** Blocks read per eth_getLogs call (providers bound a call's range). */
const RANGE = 2_000;
/**
 * How long an APUSD fund request waits for its deposit. A transfer of the amount after that is
 * still credited, but no longer taken as the one a stale request expected: the request is expired.
 */
export const FUND_REQUEST_TTL_MS = 7 * 24 * 3_600_000;

/** The address an organization's APUSD deposits go to, assigned on first use (the same for every server). */
export async function depositAddressOf(ctx: Context, org: OrganizationRow): Promise<string> {
  if (org.depositAddress) return org.depositAddress;
  const address =
    org.walletIndex !== null
      ? org.walletAddress.toLowerCase()
      : (
          await ctx.wallets.address(DEPOSIT_WALLETS, await ctx.repos.counters.nextFrom('deposit-addresses', 0))
        ).toLowerCase();
  return (await ctx.repos.deposits.assignDepositAddress(org.id, address)) ?? address;
}

export interface ScanResult {
  /** deposits credited by this pass */
  credited: number;
  /** deposits a reorg took back, reversed by this pass */
  reversed: number;
  /** the next block to read */
  nextBlock: number;
  safeHead: number;
}

/**
 * The newest block whose transfers have `confirmations` counted as the deposits view counts them
 * (head − block + 1: a transfer in the head block has 1). 0 asks for no wait, which is the same as 1.
 */
export const confirmedHead = (head: number, confirmations: number): number => head - Math.max(1, confirmations) + 1;

/**
 * Pending fund requests older than FUND_REQUEST_TTL_MS become expired (all hourly; an organization's on its deposits).
 */
export const expireFundRequests = (ctx: Context, organizationId?: string): Promise<number> =>
  ctx.repos.deposits.expireFundRequests(ctx.clock.now() - FUND_REQUEST_TTL_MS, organizationId);

/**
 * One pass of the deposit watcher: reads the token's transfers up to confirmedHead, from
 * the stored cursor on, and credits each transfer to a deposit address once (the deposit's id
 * chainId:txHash:logIndex is unique and the ledger key is derived from it), in the transaction
 * that records it. Two servers reading the same blocks credit each once; a restart goes on from
 * the cursor; a reorg under what was read is undone first (./reorgs.ts). Returns what it did.
 */
export async function scanDeposits(ctx: Context, chain: ChainConfig, reader: ChainReader): Promise<ScanResult> {
  const chainId = await reader.chainId();
  const cursorId = `${chainId}:${chain.token}`;
  const safeHead = confirmedHead(await reader.head(), chain.confirmations);
  const now = ctx.clock.now();
  if ((await ctx.repos.chainCursor.nextBlock(cursorId)) === undefined) {
    await ctx.repos.chainCursor.startCursor(
      cursorId,
      chain.startBlock === 'head' ? Math.max(0, safeHead + 1) : chain.startBlock,
      now,
    );
  }
  const rewind = await rewindReorg(
    ctx,
    chainId,
    cursorId,
    reader,
    chain.startBlock === 'head' ? 0 : chain.startBlock,
    RANGE,
  );
  let next = (await ctx.repos.chainCursor.nextBlock(cursorId)) as number;
  const result: ScanResult = { credited: 0, reversed: rewind.reversed, nextBlock: next, safeHead };
  const paid = new Set<string>();
  while (next <= safeHead) {
    const to = Math.min(safeHead, next + RANGE - 1);
    // The logs are of the chain whose block `to` has this hash, checked before and after reading
    // them: a reorg in between ends the pass, and the next one starts from the cursor.
    const hash = await reader.blockHash(to);
    const transfers = await reader.transfers(next, to);
    if (!hash || (await reader.blockHash(to)) !== hash) break;
    const owners = await ctx.repos.deposits.byDepositAddress([...new Set(transfers.map((t) => t.to))]);
    for (const transfer of transfers) {
      const organizationId = owners.get(transfer.to);
      if (!organizationId || transfer.value <= 0n) continue;
      if (await creditOnce(ctx, chainId, organizationId, transfer)) {
        result.credited++;
        paid.add(organizationId);
      }
    }
    await ctx.repos.chainCursor.checkpoint(cursorId, to, hash);
    await ctx.repos.chainCursor.advanceCursor(cursorId, to + 1, ctx.clock.now());
    next = to + 1;
  }
  result.nextBlock = next;
  // Money arrived: open invoices under APUSD autopay are paid from it.
  for (const organizationId of paid) await payOpenInvoices(ctx, organizationId);
  return result;
}

async function creditOnce(ctx: Context, chainId: number, organizationId: string, t: Transfer): Promise<boolean> {
  const id = `${chainId}:${t.txHash}:${t.logIndex}`;
  const deposit: DepositRow = {
    id,
    organizationId,
    chainId,
    txHash: t.txHash,
    logIndex: t.logIndex,
    blockNumber: t.blockNumber,
    blockHash: t.blockHash,
    fromAddress: t.from,
    toAddress: t.to,
    amountMicro: Number(t.value),
    status: 'credited',
    createdAt: ctx.clock.now(),
  };
  if (t.value > BigInt(Number.MAX_SAFE_INTEGER)) {
    ctx.log.error('an APUSD transfer too large to credit was skipped', { id, value: String(t.value) });
    return false;
  }
  return ctx.db.transaction(async (tx) => {
    let key = `deposit:${id}`;
    if (!(await tx.repos.deposits.insertOnce(deposit))) {
      // Recorded before: credited (nothing to do), or reversed by a reorg and now back on the chain,
      // credited again under a key of its new block.
      if (!(await tx.repos.deposits.creditAgain(id, t.blockNumber, t.blockHash))) return false;
      key = `deposit:${id}:${t.blockHash}`;
    }
    await post(tx, {
      organizationId,
      kind: 'deposit',
      amountMicro: deposit.amountMicro,
      idempotencyKey: key,
      reference: t.txHash,
    });
    // The oldest request of the amount still waiting takes the deposit; stale ones are expired first.
    const since = ctx.clock.now() - FUND_REQUEST_TTL_MS;
    await tx.repos.deposits.expireFundRequests(since, organizationId);
    await tx.repos.deposits.matchFundRequest(organizationId, deposit.amountMicro, id, since);
    return true;
  });
}
