import type { ChainReader } from '../../chain/apusd-transfers.js';
import type { Context } from '../../context.js';
import { post } from './ledger.js';

export interface Rewind {
  /** the first block the chain replaced, where reading starts again (undefined: no reorg) */
  from?: number;
  /** deposits whose transfer is no longer on the chain, credited back out */
  reversed: number;
}

/**
 * Finds a reorg under the blocks the watcher read: the newest checkpoint whose hash the chain
 * still has is where the chains agree (a block's hash covers all before it). Past it, every
 * credited deposit is looked up again: one whose log is gone (its transaction dropped, or moved to
 * another log index) is reversed by a ledger entry, never an edit; the same log in another block is
 * kept at its new place; the cursor goes back to re-read, which credits what moved under its new id.
 */
export async function rewindReorg(
  ctx: Context,
  chainId: number,
  cursorId: string,
  reader: ChainReader,
  floor: number,
  range: number,
): Promise<Rewind> {
  const checkpoints = await ctx.repos.chainCursor.checkpoints(cursorId);
  const newest = checkpoints[0];
  if (!newest || (await reader.blockHash(newest.number)) === newest.hash) return { reversed: 0 };
  // Deeper than every checkpoint kept: the range before the oldest is read again (never below where reading began).
  const oldest = checkpoints.at(-1) as (typeof checkpoints)[number];
  let from = Math.max(floor, oldest.number - range + 1);
  let agreed = false;
  for (const c of checkpoints.slice(1)) {
    if ((await reader.blockHash(c.number)) === c.hash) {
      from = c.number + 1;
      agreed = true;
      break;
    }
  }
  if (!agreed)
    ctx.log.error('chain reorg deeper than the checkpoints kept: reading again from the oldest range', {
      chainId,
      from,
    });
  let reversed = 0;
  for (const d of await ctx.repos.deposits.creditedFrom(chainId, from)) {
    const now = await reader.whereIs(d.txHash, d.logIndex);
    if (now) {
      await ctx.repos.deposits.moved(d.id, now.blockNumber, now.blockHash);
      continue;
    }
    const taken = await ctx.db.transaction(async (tx) => {
      if (!(await tx.repos.deposits.markReversed(d.id))) return false;
      const entry = {
        organizationId: d.organizationId,
        kind: 'deposit_reversal' as const,
        amountMicro: -d.amountMicro,
      };
      await post(tx, {
        ...entry,
        idempotencyKey: `reversal:${d.id}:${d.blockHash}`,
        reference: d.txHash,
        memo: 'a chain reorg removed the transfer',
        mayGoNegative: true,
      });
      return true;
    });
    if (taken) reversed++;
  }
  await ctx.repos.chainCursor.forgetFrom(cursorId, from);
  await ctx.repos.chainCursor.rewindCursor(cursorId, from, ctx.clock.now());
  ctx.log.warn('chain reorg: deposits read again', { chainId, from, reversed });
  return { from, reversed };
}
