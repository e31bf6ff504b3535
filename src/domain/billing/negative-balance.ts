import { iso } from '../../clock.js';
import type { Context } from '../../context.js';
import type { LedgerRow, OrganizationRow } from '../../db/repos/index.js';
import { DrmError } from '../../errors.js';
import { recordEvent } from '../events.js';
import { formatApusd } from './format.js';

/**
 * An entry moved the balance across zero (called by post, in its transaction). Going below: the
 * organization is marked from now and told with balance.negative; new sessions are refused once
 * the deployment's grace (--negative-grace) has passed. Coming back to zero or above clears it.
 */
export async function crossedZero(tx: Context, entry: LedgerRow, before: number): Promise<void> {
  const wentBelow = before >= 0 && entry.balanceAfterMicro < 0;
  const now = tx.clock.now();
  await tx.repos.organizations.update(entry.organizationId, { negativeSince: wentBelow ? now : null });
  if (!wentBelow) return;
  await recordEvent(tx, entry.organizationId, 'balance.negative', {
    balanceMicroApusd: entry.balanceAfterMicro,
    since: iso(now),
    sessionsRefusedFrom: iso(now + tx.config.negativeGraceMs),
    cause: entry.kind,
  });
}

/** A balance below zero for longer than the grace refuses what would spend more (new sessions, subscriptions). */
export function refuseWhileNegative(ctx: Context, org: OrganizationRow, what: string): void {
  if (org.negativeSince === null) return;
  const from = org.negativeSince + ctx.config.negativeGraceMs;
  if (ctx.clock.now() < from) return;
  throw new DrmError(
    'INSUFFICIENT_BALANCE',
    `${what} refused: the balance is ${formatApusd(org.apusdBalanceMicro)} APUSD, ` +
      `below zero since ${iso(org.negativeSince)}; fund the balance back to zero to go on`,
  );
}
