import type { Context, FundingMethod } from '../../context.js';
import type { DepositRow } from '../../db/repos/index.js';
import { newId } from '../../crypto/tokens.js';
import { apusdReader, type ChainReader } from '../../chain/apusd-transfers.js';
import { RepeatingPass } from '../repeating-pass.js';
import { cardFunding } from './card-funding.js';
import { depositAddressOf, scanDeposits } from './deposits.js';
import { shownAmount } from './format.js';

/**
 * APUSD by transfer: the answer says where to send it (the organization's deposit address) and
 * that it is pending; the deposit watcher credits it once the transfer has its confirmations.
 */
export const apusdFunding: FundingMethod = {
  async fund(ctx, org, request) {
    const walletAddress = await depositAddressOf(ctx, org);
    // The expected deposit: the transfer of this amount that arrives first is marked as received for it.
    const transactionId = newId();
    const now = ctx.clock.now();
    await ctx.repos.deposits.recordFundRequest({
      ...{ id: transactionId, organizationId: org.id, method: 'apusd', amountMicro: request.amountMicro, address: walletAddress },
      ...{ status: 'pending', depositId: null, createdAt: now },
    });
    const fresh = await ctx.repos.organizations.find(org.id);
    const shape = ctx.config.apiShape;
    return {
      method: 'apusd',
      walletAddress,
      amount: shownAmount(request.amountMicro, shape),
      status: 'pending',
      // Shape B's fields: nothing is credited until the transfer is read from the chain
      success: true,
      newBalance: shownAmount(fresh?.apusdBalanceMicro ?? 0, shape),
      transactionId,
    };
  },
};

/** Plugs the funding methods this deployment configured into the context (the server does it once). */
export function configureFunding(ctx: Context): void {
  if (ctx.config.chain) ctx.funding.apusd ??= apusdFunding;
  if (ctx.config.fiat) ctx.funding.fiat_card ??= cardFunding;
}

/**
 * The deposit watcher of a server: a pass at start and every pollMs; a pass that fails (the node
 * away) is logged and the next one goes on from the stored cursor.
 */
export class DepositWatcher extends RepeatingPass {
  constructor(ctx: Context, reader?: ChainReader) {
    const chain = ctx.config.chain;
    if (!chain) throw new Error('no chain configured');
    const read = reader ?? apusdReader(chain.rpcUrl, chain.token);
    super(
      async () => {
        const r = await scanDeposits(ctx, chain, read);
        if (r.credited > 0 || r.reversed > 0) ctx.log.info('APUSD deposits read', { credited: r.credited, reversed: r.reversed, nextBlock: r.nextBlock });
      },
      chain.pollMs,
      (err) => ctx.log.warn('reading APUSD deposits failed; trying again', { err: String(err) }),
    );
  }
}

export interface DepositView extends DepositRow {
  /** blocks on top of it and its own, on the chain as it is now (null: no chain configured or reachable) */
  confirmations: number | null;
}

/** The newest deposits (of one organization, or all), with their confirmations now: the operator's view. */
export async function recentDeposits(ctx: Context, options: { organizationId?: string; limit: number }): Promise<DepositView[]> {
  const rows = await ctx.repos.deposits.list(options.organizationId, options.limit);
  const chain = ctx.config.chain;
  const head = chain ? await apusdReader(chain.rpcUrl, chain.token).head().catch(() => undefined) : undefined;
  return rows.map((d) => ({ ...d, confirmations: head === undefined ? null : Math.max(0, head - d.blockNumber + 1) }));
}
