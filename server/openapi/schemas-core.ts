import { CONTENT_TYPES } from '../../src/domain/licenses.js';
import { PLAN_CODES } from '../../src/domain/plans.js';
import { SCOPES } from '../../src/domain/scopes.js';
import { arrayOf, bool, int, nullable, num, object, ref, type Schema, str, time, uuid } from './build.js';

// The resources of spec section 2 as this server sends them (src/present/*.ts): the union of
// Shapes A and B where they do not collide (docs/api.md, "Shapes").

const binaryId = str("40 characters of 0 and 1: the viewer's permanent fingerprint", { pattern: '^[01]{40}$' });
const wallet = str('an EVM address', { pattern: '^0x[0-9a-fA-F]{40}$' });
const contentType = { type: 'string', enum: [...CONTENT_TYPES] };
const scopes = arrayOf({ type: 'string', enum: [...SCOPES] });
/** Shape A sends whole APUSD, Shape B decimals to the cent; both are JSON numbers. */
export const apusd = (description?: string) => num(description ? `${description} (APUSD)` : 'APUSD');

const Plan = object({
  name: { type: 'string', enum: ['Paid', 'Enterprise', 'White-Label'] },
  basePriceApusd: num(),
  pricePerStream: num(),
  pricePerGb: num(),
  revenueSharePct: num(),
  includedStreams: int(),
  includedGb: num(),
  watermarkingIncluded: bool(),
  whiteLabelAllowed: bool(),
  poweredByRemovable: bool(),
});

const Registration = object({
  organizationId: uuid(),
  apiKey: str('the full key: shown once'),
  walletAddress: wallet,
  webhookSecret: str('HMAC-SHA256 key of webhook signatures: shown once'),
  scopes,
  message: str(),
});

const Verification = object({
  organization: object({
    id: uuid(),
    name: str(),
    email: nullable(str()),
    walletAddress: wallet,
    plan: { type: 'string', enum: [...PLAN_CODES] },
    apusdBalance: apusd(),
    isActive: bool(),
  }),
  plan: object({ name: str(), basePriceApusd: num(), pricePerStream: num(), watermarkingIncluded: bool() }),
  scopes,
  apiKey: object({ id: uuid(), prefix: str(), name: str() }),
  rateLimits: object({
    perHour: int('the limit that binds this key, as in X-RateLimit-Limit'),
    remaining: int(),
    monthlyStreamLimit: nullable(int()),
  }),
});

const Rotation = object({ apiKey: str('the new key: shown once'), oldKeyRevoked: bool(), message: str() });

const ContentSummary = object(
  {
    id: uuid(),
    title: str(),
    type: contentType,
    duration: num('seconds'),
    resolution: nullable(str('videos only, e.g. 1080p')),
    thumbnail: str('URL', { format: 'uri' }),
    previewUrl: str('URL, videos only', { format: 'uri' }),
  },
  ['resolution', 'previewUrl'],
);

const ContentDetail = {
  allOf: [
    ref('ContentSummary'),
    object({
      description: str(),
      isWatermarked: bool(),
      segmentCount: int(),
      hlsPlaylist: str('the playlist URL; a session id (?session=) is needed to fetch it', { format: 'uri' }),
    }),
  ],
};

const sessionFields = {
  id: uuid(),
  sessionId: uuid(),
  contentId: uuid(),
  viewerId: uuid(),
  binaryId,
  watermarked: bool("whether the license has watermarking on: segments follow the viewer's bits"),
  isActive: bool(),
  bytesServed: int(),
  expiresAt: time(),
  createdAt: time(),
};

const CreatedSession = object({
  ...sessionFields,
  playlistUrl: str('path of the playlist with the session query parameter'),
  walletAddress: wallet,
  isNewViewer: bool(),
});

const Session = object({ ...sessionFields, ipAddress: nullable(str()), userAgent: nullable(str()) });

const viewerFields = {
  id: uuid(),
  externalViewerId: str("the organization's own id for the viewer"),
  walletAddress: wallet,
  binaryId,
  email: nullable(str()),
  totalStreams: int(),
  firstSeen: time(),
};

const Viewer = object(
  {
    ...viewerFields,
    hasOwnWallet: bool(),
    isBlocked: bool(),
    blockedReason: nullable(str('only while blocked')),
    lastSeen: time(),
  },
  ['blockedReason'],
);

const ViewerDetail = { allOf: [ref('Viewer'), object({ streamSessions: arrayOf(ref('Session')) })] };

const ViewerSearchResult = object({ ...viewerFields, organizationName: str() });

const Delivery = object({
  id: uuid(),
  eventType: str('viewer.created, viewer.stream, viewer.blocked, organization.suspended, or test'),
  status: str('e.g. delivered, retrying, failed, skipped'),
  attempts: int(),
  responseCode: int("the receiver's HTTP status, 0 when no answer came"),
  createdAt: time(),
  deliveredAt: nullable(time()),
  nextAttemptAt: nullable(time('while retrying')),
  lastError: nullable(str()),
});

const License = object({
  licenseId: uuid(),
  contentId: str('a content id, or * for all content of the type'),
  contentType,
  licenseScope: { type: 'string', enum: ['all', 'specific'] },
  watermarkingEnabled: bool(),
  pricePerStream: num(),
  createdAt: time(),
});

const AdminOrganization = object({
  id: uuid(),
  name: str(),
  email: nullable(str()),
  walletAddress: wallet,
  plan: { type: 'string', enum: [...PLAN_CODES] },
  isActive: bool(),
  suspendedReason: nullable(str()),
  streamsThisMonth: int(),
  apusdBalance: apusd(),
  totalApiKeys: int(),
  activeLicenses: int(),
  licenses: arrayOf(ref('License')),
  rateLimitPerHour: nullable(int()),
  monthlyStreamLimit: nullable(int()),
  createdAt: time(),
});

const ContentAdmin = object(
  {
    id: uuid(),
    title: str(),
    type: contentType,
    duration: num('seconds'),
    resolution: nullable(str()),
    isWatermarked: bool(),
    segmentCount: int(),
    segmentSeconds: { type: 'integer', enum: [2, 4, 6, 10], description: 'how long each segment is, in seconds' },
    segmentRule: nullable({
      type: 'string',
      enum: ['keyed', 'fixed'],
      description: 'which bit of an id each segment carries: the item’s keyed rule, or bit s mod 40 (older content)',
    }),
    status: str('e.g. ready, deleted'),
    storagePath: nullable(str()),
    createdAt: time(),
    references: object(
      { liveSessions: int(), sessions: int(), licenses: int(), cases: int() },
      [],
      'what points at the item (detail view only)',
    ),
  },
  ['references'],
);

const Readiness = object({
  ready: bool(),
  database: { type: 'string', enum: ['ok', 'unreachable'] },
  migrations: object({ applied: int(), expected: int() }),
  dataDir: { type: 'string', enum: ['writable', 'not writable'] },
});

export const CORE_SCHEMAS: Record<string, Schema> = {
  Plan,
  Registration,
  Verification,
  Rotation,
  ContentSummary,
  ContentDetail,
  CreatedSession,
  Session,
  Viewer,
  ViewerDetail,
  ViewerSearchResult,
  Delivery,
  License,
  AdminOrganization,
  ContentAdmin,
  Readiness,
  Success: object({ success: { type: 'boolean', const: true } }),
};

export const SCHEMA_PARTS = { binaryId, wallet, contentType, scopes };
