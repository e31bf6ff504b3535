import type Stripe from 'stripe';
import type { Context } from '../../context.js';
import type { LedgerRow } from '../../db/repos/index.js';
import type { CardProcessor } from '../../payments/processor.js';
import { recordEvent } from '../events.js';
import { MICRO_PER_CENT } from './format.js';
import { type EntryKind, post } from './ledger.js';

type Event = { id: string; type: string };
const idOf = (x: string | { id: string } | null | undefined) => (typeof x === 'string' ? x : x?.id);

/** The card payment credited for an intent (its ledger key is the intent's id), if one was. */
const creditOf = (ctx: Context, intentId: string | undefined) =>
  intentId ? ctx.repos.ledger.findByKey(`card:${intentId}`) : Promise.resolve(undefined);

/**
 * `charge.refunded`: the charge is fetched from the processor (the event's copy is not trusted)
 * and what it says was refunded in all, less what the ledger already took back for the payment,
 * is taken from the balance as a card_refund entry, even below zero. A redelivery, or an older
 * event arriving late, takes nothing more. Sends payment.refunded.
 */
export async function takeRefund(
  ctx: Context,
  processor: CardProcessor,
  chargeId: string,
  event: Event,
): Promise<boolean> {
  const charge = await processor.charges.retrieve(chargeId);
  const intentId = idOf(charge.payment_intent);
  const credit = await creditOf(ctx, intentId);
  if (!credit || !intentId) return false;
  const refundedMicro = Math.min(charge.amount_refunded * MICRO_PER_CENT, credit.amountMicro);
  return ctx.db.transaction(async (tx) => {
    if (!(await tx.repos.ledger.takeFiatEvent(event.id, event.type, intentId, tx.clock.now()))) return false;
    await tx.repos.ledger.lockBalance(credit.organizationId);
    const before = -(await tx.repos.ledger.sumOfReference(credit.organizationId, 'card_refund', intentId));
    if (refundedMicro <= before) return false;
    const key = `card-refund:${intentId}:${charge.amount_refunded}`;
    const entry = await reverse(tx, credit, 'card_refund', before - refundedMicro, key);
    if (!entry) return false;
    await recordEvent(tx, credit.organizationId, 'payment.refunded', {
      paymentIntentId: intentId,
      refundedMicroApusd: refundedMicro - before,
      totalRefundedMicroApusd: refundedMicro,
      balanceMicroApusd: entry.balanceAfterMicro,
    });
    return true;
  });
}

/**
 * `charge.dispute.created` / `charge.dispute.closed`, the dispute fetched from the processor:
 * opened, its amount is taken from the balance (the processor holds it back); won, it is given
 * back; lost, it stays taken. Each step once per dispute, with payment.disputed.
 */
export async function takeDispute(
  ctx: Context,
  processor: CardProcessor,
  disputeId: string,
  event: Event,
): Promise<boolean> {
  const dispute = await processor.disputes.retrieve(disputeId);
  const intentId = idOf(dispute.payment_intent);
  const credit = await creditOf(ctx, intentId);
  if (!credit || !intentId) return false;
  const step = disputeStep(dispute.status);
  if (!step) return false;
  const amountMicro = Math.min(dispute.amount * MICRO_PER_CENT, credit.amountMicro);
  return ctx.db.transaction(async (tx) => {
    // one step of one dispute once, whichever event (and however many deliveries) bring it
    if (!(await tx.repos.ledger.takeFiatEvent(`${dispute.id}:${step}`, event.type, intentId, tx.clock.now())))
      return false;
    const opened = await tx.repos.ledger.findByKey(`card-dispute:${dispute.id}`);
    // the opening arriving after the close (events come in any order): the close did its work
    if (step === 'opened' && opened) return false;
    let entry: LedgerRow | undefined;
    if (step === 'opened' || !opened)
      entry = await reverse(tx, credit, 'card_dispute', -amountMicro, `card-dispute:${dispute.id}`);
    if (step === 'won')
      entry = await reverse(tx, credit, 'card_dispute_won', amountMicro, `card-dispute-won:${dispute.id}`);
    const balance =
      entry?.balanceAfterMicro ?? (await tx.repos.organizations.find(credit.organizationId))?.apusdBalanceMicro ?? 0;
    await recordEvent(tx, credit.organizationId, 'payment.disputed', {
      ...{ paymentIntentId: intentId, disputeId: dispute.id, status: step },
      ...{ amountMicroApusd: amountMicro, balanceMicroApusd: balance },
    });
    return true;
  });
}

function disputeStep(status: Stripe.Dispute.Status): 'opened' | 'won' | 'lost' | undefined {
  if (status === 'won') return 'won';
  if (status === 'lost') return 'lost';
  // warning_* are inquiries: nothing is held back until they become disputes
  return status.startsWith('warning_') ? undefined : 'opened';
}

async function reverse(tx: Context, credit: LedgerRow, kind: EntryKind, amountMicro: number, key: string) {
  const { entry, applied } = await post(tx, {
    ...{ organizationId: credit.organizationId, kind, amountMicro, idempotencyKey: key },
    ...{ reference: credit.reference ?? undefined, mayGoNegative: true },
  });
  return applied ? entry : undefined;
}
