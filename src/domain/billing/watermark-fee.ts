import type { Context } from '../../context.js';
import { DrmError, notFound } from '../../errors.js';
import { formatApusd } from './format.js';
import { post } from './ledger.js';
import { watermarkFeeMicro } from './pricing.js';

export interface WatermarkCharge {
  organizationId: string;
  contentId: string;
  /** what was taken from the balance (0: free, or waived by a pass) */
  feeMicro: number;
  waivedByPass: boolean;
}

const feeKey = (contentId: string) => `watermark-fee:${contentId}`;

/**
 * Takes the watermark fee of a video about to be ingested for an organization, before any work
 * starts: INSUFFICIENT_BALANCE when the balance cannot pay it (nothing is taken, nothing written).
 * Packaging without a mark, music, and holders of a valid Watermark Pass pay nothing.
 */
export async function chargeWatermarkFee(
  ctx: Context,
  request: {
    organizationId: string;
    contentId: string;
    type: 'video' | 'music';
    watermark: boolean;
    frame: { width: number; height: number } | null;
  },
): Promise<WatermarkCharge> {
  const org = await ctx.repos.organizations.find(request.organizationId);
  if (!org) throw notFound('organization');
  const base = { organizationId: org.id, contentId: request.contentId, feeMicro: 0, waivedByPass: false };
  const fee = request.watermark ? watermarkFeeMicro(request.type, request.frame) : 0;
  if (fee === 0) return base;
  if ((org.watermarkPassUntil ?? 0) > ctx.clock.now()) return { ...base, waivedByPass: true };
  await ctx.db
    .transaction((tx) =>
      post(tx, {
        organizationId: org.id,
        kind: 'watermark_fee',
        amountMicro: -fee,
        idempotencyKey: feeKey(request.contentId),
        reference: request.contentId,
      }),
    )
    .catch((err: unknown) => {
      if (!(err instanceof DrmError && err.code === 'INSUFFICIENT_BALANCE')) throw err;
      throw new DrmError(
        'INSUFFICIENT_BALANCE',
        `the watermark fee of ${formatApusd(fee)} APUSD is more than the balance ` +
          `of ${formatApusd(org.apusdBalanceMicro)} APUSD: ` +
          `credit it (drm admin billing credit --org ${org.id} --amount …) or waive the ` +
          `fee with a Watermark Pass (drm admin billing pass --org ${org.id} --days …)`,
      );
    });
  return { ...base, feeMicro: fee };
}

/** Gives a failed or cancelled ingest's fee back, once (the refund's own key), if one was taken. */
export async function refundWatermarkFee(ctx: Context, charge: WatermarkCharge): Promise<void> {
  if (charge.feeMicro === 0) return;
  await ctx.db.transaction((tx) =>
    post(tx, {
      organizationId: charge.organizationId,
      kind: 'refund',
      amountMicro: charge.feeMicro,
      idempotencyKey: `refund:${feeKey(charge.contentId)}`,
      reference: charge.contentId,
      memo: 'ingest failed or was cancelled',
    }),
  );
}

/**
 * The fee of an ingest that died outright (its leftovers swept by a later ingest): given back
 * under the same refund key, so a fee is refunded once however it ended.
 */
export async function refundAbandonedFee(ctx: Context, contentId: string): Promise<void> {
  const fee = await ctx.repos.ledger.findByKey(feeKey(contentId));
  if (!fee) return;
  await refundWatermarkFee(ctx, {
    organizationId: fee.organizationId,
    contentId,
    feeMicro: -fee.amountMicro,
    waivedByPass: false,
  });
}
