import type { Context } from '../context.js';
import { newId } from '../crypto/tokens.js';
import { VIEWER_WALLETS } from '../crypto/wallets.js';
import type { OrganizationRow, SessionRow, ViewerRow } from '../db/repos/index.js';
import { badRequest, DrmError, notFound } from '../errors.js';
import type { KeyAuth } from './auth.js';
import { isBinaryId } from './binary-ids.js';
import { allocateViewerId } from './identity/allocate.js';
import { recordEvent } from './events.js';
import { isUuid } from './validate.js';
import type { ViewerClaims } from './viewer-tokens.js';

/** Who a stream is for, as the request named them: a verified token, the organization's word, or nobody. */
export interface ViewerIdentity {
  externalViewerId: string;
  email?: string;
  walletAddress?: string;
}

export function identityFromClaims(c: ViewerClaims): ViewerIdentity {
  return {
    externalViewerId: c.sub,
    ...(c.email && { email: c.email }),
    ...(c.walletAddress && { walletAddress: c.walletAddress }),
  };
}

/** What a new viewer is given: a permanent binaryId and, unless it brought its own wallet, a wallet index. */
export interface NewViewerNumbers {
  binaryId: string;
  walletIndex: number | null;
}

/**
 * Takes a new viewer's numbers from the shared counters (./identity/allocate.ts): each an atomic
 * statement of its own, meant to run before the viewer's transaction, so that no lock or counter
 * row is held while other sessions are made. A number taken for a viewer that turns out to exist
 * (made meanwhile by another request) is simply never used.
 */
export async function takeViewerNumbers(ctx: Context, who: ViewerIdentity): Promise<NewViewerNumbers> {
  const binaryId = await allocateViewerId(ctx);
  const walletIndex = who.walletAddress ? null : await ctx.repos.counters.nextViewerWalletIndex();
  return { binaryId, walletIndex };
}

/** The organization a viewer is made for, as the request's key found it. */
type WebhookOwner = Pick<OrganizationRow, 'id' | 'webhookUrl'>;

/**
 * Ids an older viewer already holds are rare (an older random id lies in a code's coset with chance 2^(d−40)); this
 * bounds a broken table.
 */
const MAX_TAKEN_IDS = 1000;

/**
 * The viewer a new session is for, its stream counted (totalStreams and lastSeen), in the
 * caller's transaction: `known` when the caller found the viewer before it, else made on first
 * sight with `numbers` (taken before the transaction by takeViewerNumbers, or here) and a wallet
 * derived unless it brought its own. The viewer.created event exists exactly when the viewer does.
 */
export async function streamingViewer(
  ctx: Context,
  org: WebhookOwner,
  who: ViewerIdentity,
  derive: (account: number, index: number) => string,
  now: number,
  prior: { known?: ViewerRow; numbers?: NewViewerNumbers },
): Promise<{ viewer: ViewerRow; isNew: boolean }> {
  const organizationId = org.id;
  if (!prior.known) {
    const made = await createViewer(ctx, org, who, derive, now, prior.numbers);
    if (made) return { viewer: made, isNew: true };
  }
  // Known, or made meanwhile by a concurrent first session of the same person.
  const id = prior.known?.id ?? (await ctx.repos.viewers.findByExternal(organizationId, who.externalViewerId))?.id;
  const viewer = id === undefined ? undefined : await ctx.repos.viewers.countStream(id, now);
  if (!viewer) throw new Error(`viewer ${who.externalViewerId} of ${organizationId} was neither made nor found`);
  return { viewer, isNew: false };
}

/** Inserts the new viewer, or answers undefined when the organization has one with its external id already. */
async function createViewer(
  ctx: Context,
  org: WebhookOwner,
  who: ViewerIdentity,
  derive: (account: number, index: number) => string,
  now: number,
  numbers: NewViewerNumbers | undefined,
): Promise<ViewerRow | undefined> {
  const organizationId = org.id;
  let { binaryId, walletIndex } = numbers ?? (await takeViewerNumbers(ctx, who));
  const walletAddress = who.walletAddress ?? derive(VIEWER_WALLETS, walletIndex as number);
  for (let attempt = 0; attempt < MAX_TAKEN_IDS; attempt++) {
    const viewer: ViewerRow = {
      id: newId(),
      organizationId,
      externalViewerId: who.externalViewerId,
      binaryId,
      walletAddress,
      walletIndex,
      hasOwnWallet: Boolean(who.walletAddress),
      email: who.email ?? null,
      totalStreams: 1,
      isBlocked: false,
      blockedReason: null,
      firstSeen: now,
      lastSeen: now,
    };
    if (await ctx.repos.viewers.insertUnlessTaken(viewer)) {
      await recordEvent(
        ctx,
        organizationId,
        'viewer.created',
        { viewerId: viewer.id, walletAddress, binaryId },
        { webhookUrl: org.webhookUrl },
      );
      return viewer;
    }
    if (await ctx.repos.viewers.findByExternal(organizationId, who.externalViewerId)) return undefined;
    // The id is an older viewer's: the next number of the counter.
    binaryId = await allocateViewerId(ctx);
  }
  throw new DrmError('INTERNAL_ERROR', `no free viewer id after ${MAX_TAKEN_IDS} numbers of the counter`);
}

/** An organization's own viewer, or NOT_FOUND (another organization's viewers do not exist for it). */
export async function ownViewer(ctx: Context, auth: KeyAuth, viewerId: string): Promise<ViewerRow> {
  const viewer = isUuid(viewerId) ? await ctx.repos.viewers.find(viewerId) : undefined;
  if (!viewer || viewer.organizationId !== auth.org.id) throw notFound('viewer');
  return viewer;
}

/** The sessions a viewer detail shows: the most recent ones. */
export const VIEWER_SESSIONS_SHOWN = 100;

export async function viewerDetail(
  ctx: Context,
  auth: KeyAuth,
  viewerId: string,
): Promise<{ viewer: ViewerRow; sessions: SessionRow[] }> {
  const viewer = await ownViewer(ctx, auth, viewerId);
  return { viewer, sessions: await ctx.repos.sessions.listForViewer(viewer.id, VIEWER_SESSIONS_SHOWN) };
}

export async function listViewers(
  ctx: Context,
  auth: KeyAuth,
  o: { blocked?: boolean; limit: number; offset: number },
) {
  const [viewers, total] = await Promise.all([
    ctx.repos.viewers.list(auth.org.id, o),
    ctx.repos.viewers.count(auth.org.id, o.blocked),
  ]);
  return { viewers, total };
}

const MAX_REASON = 500;

/** Blocks or unblocks one of the organization's viewers; blocking records viewer.blocked. */
export async function setViewerBlocked(
  ctx: Context,
  auth: KeyAuth,
  viewerId: string,
  blocked: boolean,
  reason?: string,
): Promise<void> {
  if (reason !== undefined && reason.length > MAX_REASON)
    throw badRequest(`reason is longer than ${MAX_REASON} characters`);
  const viewer = await ownViewer(ctx, auth, viewerId);
  await ctx.db.transaction(async (tx) => {
    await tx.repos.viewers.setBlocked(viewer.id, auth.org.id, blocked, blocked ? (reason ?? null) : null);
    if (blocked) await recordEvent(tx, auth.org.id, 'viewer.blocked', { viewerId: viewer.id, reason: reason ?? '' });
  });
}

/**
 * The viewer a leak's fingerprint names (scope forensics). Only the organization's own viewers are
 * found: another organization's viewer (email, wallet) is not the caller's to see.
 */
export async function searchByBinaryId(ctx: Context, auth: KeyAuth, binaryId: string | undefined) {
  if (binaryId === undefined || !isBinaryId(binaryId))
    throw badRequest('binaryId must be exactly 40 characters of 0 and 1');
  const viewer = await ctx.repos.viewers.findByBinaryId(binaryId);
  if (!viewer || viewer.organizationId !== auth.org.id) throw notFound('viewer');
  return { viewer, organizationName: auth.org.name };
}
