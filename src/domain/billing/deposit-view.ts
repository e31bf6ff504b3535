import { apusdReader } from '../../chain/apusd-transfers.js';
import type { Context } from '../../context.js';
import type { DepositRow } from '../../db/repos/index.js';

export interface DepositView extends DepositRow {
  /** blocks on top of it and its own, on the chain as it is now (null: no chain configured or reachable) */
  confirmations: number | null;
}

/** The newest deposits (of one organization, or all), with their confirmations now: the operator's view. */
export async function recentDeposits(
  ctx: Context,
  options: { organizationId?: string; limit: number },
): Promise<DepositView[]> {
  const rows = await ctx.repos.deposits.list(options.organizationId, options.limit);
  const chain = ctx.config.chain;
  const head = chain
    ? await apusdReader(chain.rpcUrl, chain.token)
        .head()
        .catch(() => undefined)
    : undefined;
  return rows.map((d) => ({ ...d, confirmations: head === undefined ? null : Math.max(0, head - d.blockNumber + 1) }));
}
