import { CONTENT_TYPES } from '../../src/domain/licenses.js';
import {
  admin,
  arrayOf,
  bool,
  conflict,
  type Endpoint,
  errorResponse,
  int,
  jsonBody,
  jsonResponse,
  notFound,
  num,
  object,
  open,
  pagingParams,
  pathParam,
  queryParam,
  ref,
  str,
  time,
  uuid,
} from './build.js';
import { SCHEMA_PARTS } from './schemas-core.js';

// Spec 4.9 and the admin sign-in (SIWE), suspension and content management.

const ADMIN = 'Admin';
const orgId = pathParam('id', 'the organization', uuid());

const SIWE_EXAMPLE = [
  'drm.example.com wants you to sign in with your Ethereum account:',
  '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed',
  '',
  'Sign in to the drm admin API',
  '',
  'URI: https://drm.example.com',
  'Version: 1',
  'Chain ID: 1',
  'Nonce: 7a1b2c3d4e5f6a7b8',
  'Issued At: 2025-01-01T00:00:00.000Z',
].join('\n');

const signIn: Endpoint[] = [
  {
    method: 'get',
    path: '/api/v1/admin/auth/nonce',
    operation: open(ADMIN, {
      operationId: 'adminNonce',
      summary: 'A single-use nonce for a SIWE sign-in message (10 minutes)',
      description: 'Limited per client address and hour.',
      responses: {
        '200': jsonResponse('the nonce', object({ nonce: str(), expiresAt: time() })),
        '429': errorResponse('RateLimited'),
      },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/admin/auth/verify',
    operation: open(ADMIN, {
      operationId: 'adminSignIn',
      summary: 'Exchange a signed EIP-4361 message for a 12-hour admin token',
      description:
        "The message's domain must be the host the server is reached at (or " +
        "--public-url's); its nonce is consumed once. A bad signature, domain, time " +
        'or nonce is 401 INVALID_ADMIN_TOKEN; a wallet that is not granted admin 403 ' +
        'ADMIN_REQUIRED.',
      requestBody: jsonBody(
        object({
          message: str('the EIP-4361 message', { maxLength: 4000 }),
          signature: str('0x-prefixed hex', { pattern: '^0x[0-9a-fA-F]+$', maxLength: 200 }),
        }),
        { message: SIWE_EXAMPLE, signature: `0x${'ab'.repeat(65)}` },
      ),
      responses: {
        '200': jsonResponse(
          'the admin token',
          object({ token: str('JWT, sent as Authorization: Bearer'), address: SCHEMA_PARTS.wallet, expiresAt: time() }),
        ),
        '401': errorResponse('InvalidAdminToken'),
        '403': errorResponse('AdminRequired'),
      },
    }),
  },
];

const licenseBody = object(
  {
    contentId: str('a content id, or * for all content of contentType', { maxLength: 64 }),
    contentType: { type: 'string', enum: [...CONTENT_TYPES] },
    licenseScope: {
      type: 'string',
      enum: ['all', 'specific'],
      description: 'all goes with contentId *, specific with one content id; follows contentId when omitted',
    },
    watermarkingEnabled: { ...bool(), default: true },
    pricePerStream: num('APUSD', { minimum: 0, maximum: 1_000_000, default: 0 }),
  },
  ['licenseScope', 'watermarkingEnabled', 'pricePerStream'],
);

const rateLimitBody = {
  ...object(
    {
      rateLimitPerHour: int(undefined, { minimum: 1, maximum: 10_000_000 }),
      monthlyStreamLimit: int('organization only', { minimum: 0, maximum: 1_000_000_000 }),
      keyId: str("set the hourly limit of this key instead of the organization's", { maxLength: 64 }),
    },
    ['rateLimitPerHour', 'monthlyStreamLimit', 'keyId'],
  ),
  anyOf: [{ required: ['rateLimitPerHour'] }, { required: ['monthlyStreamLimit'] }],
};

const organizations: Endpoint[] = [
  {
    method: 'get',
    path: '/api/v1/admin/organizations',
    operation: admin(ADMIN, {
      operationId: 'adminListOrganizations',
      summary: 'Every organization with its usage, keys, licenses and limits',
      parameters: pagingParams(500),
      responses: {
        '200': jsonResponse(
          'a page of organizations',
          object({ organizations: arrayOf(ref('AdminOrganization')), page: int(), limit: int() }),
        ),
      },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/admin/organizations/{id}/license',
    operation: admin(ADMIN, {
      operationId: 'adminGrantLicense',
      summary: 'License content to an organization',
      parameters: [orgId],
      requestBody: jsonBody(licenseBody, {
        contentId: '*',
        contentType: 'video',
        licenseScope: 'all',
        watermarkingEnabled: true,
        pricePerStream: 0.05,
      }),
      responses: {
        '200': jsonResponse('licensed', object({ success: { type: 'boolean', const: true }, licenseId: uuid() })),
        '404': notFound,
      },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/admin/organizations/{id}/rate-limit',
    operation: admin(ADMIN, {
      operationId: 'adminSetRateLimit',
      summary: "Set an organization's (or one key's) hourly limit and the monthly stream limit",
      parameters: [orgId],
      requestBody: jsonBody(rateLimitBody, { rateLimitPerHour: 5000, monthlyStreamLimit: 100000 }),
      responses: { '200': jsonResponse('set', ref('Success')), '404': notFound },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/admin/organizations/{id}/suspend',
    operation: admin(ADMIN, {
      operationId: 'adminSuspend',
      summary: 'Suspend an organization',
      description:
        'Its keys get 403 ORGANIZATION_SUSPENDED (billing reads and payments ' +
        'excepted); emits organization.suspended. 409 when already suspended.',
      parameters: [orgId],
      requestBody: jsonBody(object({ reason: str(undefined, { maxLength: 500 }) }), { reason: 'unpaid invoices' }),
      responses: { '200': jsonResponse('suspended', ref('Success')), '404': notFound, '409': conflict },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/admin/organizations/{id}/reactivate',
    operation: admin(ADMIN, {
      operationId: 'adminReactivate',
      summary: 'Lift a suspension',
      parameters: [orgId],
      responses: { '200': jsonResponse('active again', ref('Success')), '404': notFound, '409': conflict },
    }),
  },
];

const contentId = pathParam('id', 'the content item', uuid());

const content: Endpoint[] = [
  {
    method: 'get',
    path: '/api/v1/admin/content',
    operation: admin(ADMIN, {
      operationId: 'adminListContent',
      summary: 'Every content item',
      parameters: pagingParams(200),
      responses: {
        '200': jsonResponse(
          'a page of content',
          object({ content: arrayOf(ref('ContentAdmin')), total: int(), page: int(), limit: int() }),
        ),
      },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/admin/content/{id}',
    operation: admin(ADMIN, {
      operationId: 'adminGetContent',
      summary: 'One content item with what points at it',
      parameters: [contentId],
      responses: { '200': jsonResponse('the item', ref('ContentAdmin')), '404': notFound },
    }),
  },
  {
    method: 'delete',
    path: '/api/v1/admin/content/{id}',
    operation: admin(ADMIN, {
      operationId: 'adminDeleteContent',
      summary: 'Delete a content item: its files, licenses and row in one step',
      description:
        'Refused (409) while sessions play it unless force=true, which ends them. A ' +
        'row that sessions or cases name stays as a tombstone (status deleted, no ' +
        'files): who streamed it is evidence.',
      parameters: [
        contentId,
        queryParam('force', 'end the sessions playing it', {
          type: 'string',
          enum: ['true', 'false'],
          default: 'false',
        }),
      ],
      responses: {
        '200': jsonResponse(
          'deleted',
          object({
            success: { type: 'boolean', const: true },
            id: uuid(),
            outcome: { type: 'string', enum: ['removed', 'tombstone'] },
            endedSessions: int(),
          }),
        ),
        '404': notFound,
        '409': conflict,
      },
    }),
  },
];

export const ADMIN_ENDPOINTS: Endpoint[] = [...signIn, ...organizations, ...content];
