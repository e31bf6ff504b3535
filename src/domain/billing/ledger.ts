import type { Context } from '../../context.js';
import { newId } from '../../crypto/tokens.js';
import type { LedgerRow } from '../../db/repos/index.js';
import { DrmError, notFound } from '../../errors.js';
import { formatApusd } from './format.js';
import { crossedZero } from './negative-balance.js';

export type EntryKind =
  | 'deposit'
  | 'deposit_reversal'
  | 'card_payment'
  | 'card_refund'
  | 'card_dispute'
  | 'card_dispute_won'
  | 'credit'
  | 'invoice_payment'
  | 'watermark_fee'
  | 'refund';

export interface Posting {
  organizationId: string;
  kind: EntryKind;
  /** signed micro-APUSD: above 0 adds to the balance, below takes from it */
  amountMicro: number;
  /** what the entry is for; the same key twice is one entry */
  idempotencyKey: string;
  reference?: string;
  memo?: string;
  /**
   * a debit that must be recorded even when the balance cannot cover it (money taken back: a reorg, a refund, a
   * dispute)
   */
  mayGoNegative?: boolean;
}

export interface Posted {
  entry: LedgerRow;
  /** false when the key was posted before: nothing moved this time */
  applied: boolean;
}

/**
 * Appends one entry and moves the cached balance with it; call it with the context of the
 * transaction of the entry's cause, so both exist or neither. A key posted before returns that
 * entry and moves nothing (a retry, a restart, a second server). A debit the balance cannot
 * cover is refused with INSUFFICIENT_BALANCE: balances go below zero only when money that was
 * already spent is taken back (`mayGoNegative`: a reorg, a card refund or dispute). Crossing zero
 * is recorded on the organization in the same transaction (./negative-balance.ts).
 */
export async function post(tx: Context, p: Posting): Promise<Posted> {
  if (!Number.isSafeInteger(p.amountMicro) || p.amountMicro === 0)
    throw new DrmError('INTERNAL_ERROR', `ledger amount must be a non-zero integer, got ${p.amountMicro}`);
  const balance = await tx.repos.ledger.lockBalance(p.organizationId);
  if (balance === undefined) throw notFound('organization');
  const earlier = await tx.repos.ledger.findByKey(p.idempotencyKey);
  if (earlier) return { entry: earlier, applied: false };
  const after = balance + p.amountMicro;
  if (after < 0 && !p.mayGoNegative) {
    throw new DrmError(
      'INSUFFICIENT_BALANCE',
      `the balance of ${formatApusd(balance)} APUSD does not cover ${formatApusd(-p.amountMicro)} APUSD`,
    );
  }
  const entry: LedgerRow = {
    id: newId(),
    organizationId: p.organizationId,
    kind: p.kind,
    amountMicro: p.amountMicro,
    balanceAfterMicro: after,
    idempotencyKey: p.idempotencyKey,
    reference: p.reference ?? null,
    memo: p.memo ?? null,
    createdAt: tx.clock.now(),
  };
  await tx.repos.ledger.insert(entry);
  await tx.repos.ledger.setBalance(p.organizationId, after);
  if (balance < 0 !== after < 0) await crossedZero(tx, entry, balance);
  return { entry, applied: true };
}
