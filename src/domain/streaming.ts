import { randomUUID } from 'node:crypto';
import type { Context } from '../context.js';
import { unseal } from '../crypto/sealed.js';
import { newId } from '../crypto/tokens.js';
import { isEvmAddress } from '../crypto/wallets.js';
import type { ContentRow, ServingSession, SessionRow, ViewerRow } from '../db/repos/index.js';
import { badRequest, DrmError, notFound } from '../errors.js';
import { sessionPlaylist } from '../media/hls.js';
import { segmentName, type VariantDir } from '../storage/content-store.js';
import type { SegmentRule } from '../watermark/segment-rule.js';
import { variantFor } from '../watermark/segments.js';
import { contentRule } from './content-rule.js';
import type { KeyAuth } from './auth.js';
import { licensedContent } from './catalog.js';
import { recordEvent } from './events.js';
import { countMonthlyStream } from './monthly-streams.js';
import { asObject, isUuid, optionalString } from './validate.js';
import { verifyViewerToken } from './viewer-tokens.js';
import { refuseWhileNegative } from './billing/negative-balance.js';
import {
  identityFromClaims,
  streamingViewer,
  type NewViewerNumbers,
  takeViewerNumbers,
  type ViewerIdentity,
} from './viewers.js';

/** A session lasts the film plus this long, so a viewer who pauses still finishes it. */
export const SESSION_GRACE_MS = 4 * 3_600_000;

export interface ClientInfo {
  ip: string | null;
  userAgent: string | null;
}

export interface CreatedSession {
  session: SessionRow;
  viewer: ViewerRow;
  isNewViewer: boolean;
}

/**
 * Who the request names: a verified token, else Shape B's viewerId on the organization's word, else a new anonymous
 * viewer.
 */
async function identify(ctx: Context, auth: KeyAuth, body: unknown): Promise<ViewerIdentity> {
  const f = asObject(body);
  const token = optionalString(f, 'viewerToken', { max: 8192 });
  const wallet = optionalString(f, 'walletAddress', { max: 42 });
  if (wallet !== undefined && !isEvmAddress(wallet))
    throw badRequest('walletAddress must be 0x followed by 40 hex digits');
  const viewerId = optionalString(f, 'viewerId', { min: 1, max: 256 });
  if (token !== undefined) {
    const who = identityFromClaims(await verifyViewerToken(auth.org, token, ctx.clock.now()));
    return { ...who, ...(wallet && !who.walletAddress && { walletAddress: wallet }) };
  }
  const externalViewerId = viewerId ?? `anonymous-${randomUUID()}`;
  return { externalViewerId, ...(wallet && { walletAddress: wallet }) };
}

/**
 * POST /stream/{contentId}: the viewer (made on first sight), a session bound to the client's IP
 * and user agent, and the events, all in one transaction; the stream counted in the month first.
 */
export async function createSession(
  ctx: Context,
  auth: KeyAuth,
  contentId: string,
  body: unknown,
  client: ClientInfo,
): Promise<CreatedSession> {
  refuseWhileNegative(ctx, auth.org, 'a new session');
  const { content, license } = await licensedContent(ctx, auth, contentId);
  if (!content.storagePath) throw notFound('a packaged stream of this content');
  const who = await identify(ctx, auth, body);
  const derive = await ctx.wallets.deriver();
  const counted = await countMonthlyStream(ctx, auth, ctx.clock.now());
  let created: CreatedSession;
  try {
    const known = await ctx.repos.viewers.findByExternal(auth.org.id, who.externalViewerId);
    const numbers = known ? undefined : await takeViewerNumbers(ctx, who);
    created = await ctx.db.transaction((tx) =>
      storeSession(tx, { auth, content, license, who, derive, client, known, numbers }),
    );
  } catch (err) {
    await counted.release();
    throw err;
  }
  return created;
}

interface SessionRequest {
  auth: KeyAuth;
  content: ContentRow;
  license: { watermarkingEnabled: boolean; pricePerStreamMicro: number };
  who: ViewerIdentity;
  derive: (account: number, index: number) => string;
  client: ClientInfo;
  /** the viewer as found before the transaction */
  known: ViewerRow | undefined;
  /** a new viewer's numbers, taken before the transaction */
  numbers: NewViewerNumbers | undefined;
}

async function storeSession(tx: Context, r: SessionRequest): Promise<CreatedSession> {
  const { auth, content, client } = r;
  // One instant for the session, the viewer's firstSeen and its lastSeen, so lastSeen >= firstSeen.
  const now = tx.clock.now();
  const { viewer, isNew } = await streamingViewer(tx, auth.org, r.who, r.derive, now, {
    known: r.known,
    numbers: r.numbers,
  });
  if (viewer.isBlocked)
    throw new DrmError('VIEWER_BLOCKED', `viewer is blocked${viewer.blockedReason ? `: ${viewer.blockedReason}` : ''}`);
  const session: SessionRow = {
    id: newId(),
    organizationId: auth.org.id,
    apiKeyId: auth.key.id,
    contentId: content.id,
    viewerId: viewer.id,
    ipAddress: client.ip?.slice(0, 64) ?? null,
    userAgent: client.userAgent?.slice(0, 512) ?? null,
    isActive: true,
    bytesServed: 0,
    expiresAt: now + content.duration + SESSION_GRACE_MS,
    createdAt: now,
    // Fixed for the session's life: a license changed later applies to the next session.
    watermarked: content.isWatermarked && r.license.watermarkingEnabled,
    // A license's own price (above 0) is what this stream costs; 0 leaves it to the plan (docs/billing.md).
    pricePerStreamMicro: r.license.pricePerStreamMicro > 0 ? r.license.pricePerStreamMicro : null,
    viewerBits: Number.parseInt(viewer.binaryId, 2),
  };
  await tx.repos.sessions.insert(session);
  const webhookUrl = auth.org.webhookUrl;
  await recordEvent(
    tx,
    auth.org.id,
    'viewer.stream',
    { viewerId: viewer.id, contentId: content.id, sessionId: session.id },
    { webhookUrl },
  );
  return { session, viewer, isNewViewer: isNew };
}

/** One of the organization's sessions (another organization's do not exist for it). */
export async function ownSession(ctx: Context, auth: KeyAuth, sessionId: string): Promise<SessionRow> {
  const session = isUuid(sessionId) ? await ctx.repos.sessions.find(sessionId) : undefined;
  if (!session || session.organizationId !== auth.org.id) throw notFound('session');
  return session;
}

export async function endSession(ctx: Context, auth: KeyAuth, sessionId: string): Promise<void> {
  const session = await ownSession(ctx, auth, sessionId);
  await ctx.repos.sessions.deactivate(session.id, auth.org.id);
}

/** What a playlist, key or segment request may use: a live session of this content, and the content. */
export interface Serving {
  serving: ServingSession;
  content: ContentRow & { storagePath: string };
  /** which bit of the viewer's id each segment carries, and as which variant */
  rule: SegmentRule;
}

/**
 * The session id is the capability for playlist, key and segments (players cannot hold an API
 * key). It must name a session of this content that is active and unexpired, of a viewer who is
 * not blocked, of an organization that is not suspended.
 */
export async function servingSession(ctx: Context, contentId: string, sessionId: string | undefined): Promise<Serving> {
  if (!sessionId) throw badRequest('the session query parameter is required');
  const serving = isUuid(sessionId) ? await ctx.repos.sessions.findServing(sessionId) : undefined;
  if (!serving || serving.session.contentId !== contentId) throw notFound('session');
  const { session } = serving;
  if (!session.isActive) throw new DrmError('SESSION_EXPIRED', 'the session has ended');
  if (session.expiresAt <= ctx.clock.now()) throw new DrmError('SESSION_EXPIRED', 'the session has expired');
  if (serving.viewerBlocked) throw new DrmError('VIEWER_BLOCKED', 'the viewer is blocked');
  if (!serving.organizationActive) throw new DrmError('ORGANIZATION_SUSPENDED', 'the organization is suspended');
  const content = await ctx.repos.content.find(contentId);
  if (!content?.storagePath || content.status !== 'ready') throw notFound('content');
  return { serving, content: content as Serving['content'], rule: contentRule(ctx, content) };
}

/**
 * The variant directory segment n is served from for this session's viewer: the variant of the
 * bit of their id that the content's rule puts on segment n. A session whose license turned
 * watermarking off gets variant A throughout: one copy for every viewer of that organization,
 * which a leak cannot trace to one of them.
 */
export function variantOf(s: Serving, n: number): VariantDir {
  if (!s.content.isWatermarked) return 'plain';
  if (!s.serving.session.watermarked) return 'a';
  return variantFor(s.serving.binaryId, n, s.rule) === 'A' ? 'a' : 'b';
}

/** The 16 bytes of the content's AES-128 key. */
export function contentKey(ctx: Context, content: ContentRow): Buffer {
  if (!content.contentKey) throw new DrmError('INTERNAL_ERROR', 'content has no key');
  return Buffer.from(unseal(ctx.keys.seal, content.contentKey), 'base64');
}

/** A segment number from the URL: a whole number below the content's segment count. */
export function segmentNumber(raw: string, content: ContentRow): number {
  // `{n}.ts` is what served playlists name (players since ffmpeg's 2025 HLS fixes refuse segment
  // URIs without a media extension); the spec's bare `{n}` is served the same.
  const m = /^(\d{1,9})(?:\.ts)?$/.exec(raw);
  if (!m)
    throw badRequest(`segment must be a whole number, optionally with .ts, got ${JSON.stringify(raw.slice(0, 20))}`);
  const n = Number(m[1]);
  if (n >= content.segmentCount) throw notFound(`segment ${n} (the content has ${content.segmentCount})`);
  return n;
}

/**
 * The session's playlist. Its key and segment URIs are capability URLs carrying the session id,
 * since a player holds no API key. One playlist serves both variants: the segment URIs name no
 * variant, the server picks it per segment (variantOf), so A's durations stand for B's.
 */
export async function servingPlaylist(ctx: Context, s: Serving): Promise<string> {
  const { content } = s;
  const segments = await ctx.storage.segments(content.storagePath, content.isWatermarked ? 'a' : 'plain');
  const capability = `?session=${s.serving.session.id}`;
  const base = `/api/v1/stream/${content.id}`;
  return sessionPlaylist(segments, s.rule.segmentSeconds, {
    key: `${base}/key${capability}`,
    segment: (n) => `${base}/segment/${n}.ts${capability}`,
  });
}

/** A segment as served: where it is stored, and the callback that counts what was sent of it. */
export interface ServedSegment {
  storagePath: string;
  /** its name in the item (segmentName: the variant this viewer gets) */
  name: string;
  countBytes(bytes: number): void;
}

/**
 * Segment `raw` (the URL's `{n}` or `{n}.ts`) in the variant this session's viewer gets. The bytes
 * are counted once, in one UPDATE, when the file is done or the player hung up. By then the
 * response is under way and nobody awaits the count, so a failure is logged, not thrown.
 */
export function servedSegment(ctx: Context, s: Serving, raw: string): ServedSegment {
  const n = segmentNumber(raw, s.content);
  const sessionId = s.serving.session.id;
  return {
    storagePath: s.content.storagePath,
    name: segmentName(variantOf(s, n), n),
    countBytes: (bytes) => {
      ctx.repos.sessions
        .addBytes(sessionId, bytes)
        .catch((err) => ctx.log.warn('bytesServed not counted', { err: String(err) }));
    },
  };
}
