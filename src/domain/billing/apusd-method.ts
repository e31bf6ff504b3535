import type { ChainReader } from '../../chain/apusd-transfers.js';
import type { Context, PaymentMethod } from '../../context.js';
import { newId } from '../../crypto/tokens.js';
import { DrmError } from '../../errors.js';
import { RepeatingPass } from '../repeating-pass.js';
import { payInvoice } from './autopay.js';
import { depositAddressOf, scanDeposits } from './deposits.js';
import { shownAmount } from './format.js';

/**
 * APUSD, the token on an EVM chain. Funding answers where to send it (the organization's deposit
 * address) and that it is pending; the deposit watcher credits the transfer once it has its
 * confirmations. Autopay pays from the balance, and an invoice the balance cannot cover waits
 * for the next deposit (payOpenInvoices) rather than a retry schedule.
 */
export const apusdMethod: PaymentMethod = {
  name: 'apusd',
  unavailable: (config) =>
    config.chain
      ? undefined
      : 'funding by apusd is not configured on this deployment (no --chain-rpc and --apusd-token)',

  async fund(ctx, org, request) {
    const walletAddress = await depositAddressOf(ctx, org);
    // The expected deposit: the transfer of this amount that arrives first is marked as received for it.
    const transactionId = newId();
    await ctx.repos.deposits.recordFundRequest({
      ...{ id: transactionId, organizationId: org.id, method: 'apusd', amountMicro: request.amountMicro },
      ...{ address: walletAddress, status: 'pending', depositId: null, createdAt: ctx.clock.now() },
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

  async chargeInvoice(ctx, _org, invoice) {
    try {
      const paid = await payInvoice(ctx, invoice);
      return { paid: paid.paymentStatus === 'paid' };
    } catch (err) {
      if (err instanceof DrmError && err.code === 'INSUFFICIENT_BALANCE') return { paid: false, reason: err.message };
      throw err;
    }
  },

  watcher: (ctx) => (ctx.config.chain ? new DepositWatcher(ctx) : undefined),
};

/**
 * The deposit watcher of a server: a pass at start and every pollMs; a pass that fails (the node
 * away) is logged and the next one goes on from the stored cursor.
 */
export class DepositWatcher extends RepeatingPass {
  constructor(ctx: Context, reader?: ChainReader) {
    const chain = ctx.config.chain;
    if (!chain) throw new Error('no chain configured');
    // viem is loaded by the first pass, not by every command that makes a context
    let read = reader;
    super(
      async () => {
        read ??= (await import('../../chain/apusd-transfers.js')).apusdReader(chain.rpcUrl, chain.token);
        const r = await scanDeposits(ctx, chain, read);
        if (r.credited > 0 || r.reversed > 0) {
          ctx.log.info('APUSD deposits read', { credited: r.credited, reversed: r.reversed, nextBlock: r.nextBlock });
        }
      },
      chain.pollMs,
      (err) => ctx.log.warn('reading APUSD deposits failed; trying again', { err: String(err) }),
    );
  }
}
