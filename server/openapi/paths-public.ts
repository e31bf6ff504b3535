import { PLAN_CODES } from '../../src/domain/plans.js';
import {
  arrayOf,
  type Endpoint,
  errorResponse,
  jsonBody,
  jsonResponse,
  keyed,
  object,
  open,
  ref,
  str,
} from './build.js';
import { SCHEMA_PARTS } from './schemas-core.js';

// The operational endpoints (no /api/v1: they describe the process, not the API version), the
// organization's authentication (spec 4.1) and the open plan list (4.2).

const OPS = 'Operations';
const AUTH = 'Authentication';

const operations: Endpoint[] = [
  {
    method: 'get',
    path: '/health',
    operation: open(OPS, {
      operationId: 'health',
      summary: 'Liveness: the process answers',
      responses: { '200': jsonResponse('alive', object({ ok: { type: 'boolean', const: true } })) },
    }),
  },
  {
    method: 'get',
    path: '/ready',
    operation: open(OPS, {
      operationId: 'ready',
      summary: 'Readiness: database reachable, migrations applied, data directory writable',
      responses: {
        '200': jsonResponse('ready to serve', ref('Readiness')),
        '503': jsonResponse('not ready; the body says what is missing', ref('Readiness')),
      },
    }),
  },
  {
    method: 'get',
    path: '/metrics',
    operation: open(OPS, {
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      description:
        'Requests by method, route pattern and status, latency, sessions, segment ' +
        'bytes, forensic cases and webhook deliveries by status; never an id or a ' +
        'key.',
      responses: {
        '200': {
          description: 'Prometheus text exposition format',
          content: { 'text/plain; version=0.0.4; charset=utf-8': { schema: { type: 'string' } } },
        },
      },
    }),
  },
  {
    method: 'get',
    path: '/openapi.json',
    operation: open(OPS, {
      operationId: 'openapi',
      summary: 'This document',
      description:
        'OpenAPI 3.1, for the --api-shape this server runs with. Cacheable; answers 304 to a matching If-None-Match.',
      responses: {
        '200': jsonResponse('the OpenAPI document', { type: 'object' }),
        '304': { description: 'not modified' },
      },
    }),
  },
];

const registerExample = {
  name: 'Acme Films',
  email: 'ops@acme.example',
  signingAlgorithm: 'RS256',
  webhookUrl: 'https://hooks.acme.example/drm',
};

const auth: Endpoint[] = [
  {
    method: 'post',
    path: '/api/v1/auth/register',
    operation: open(AUTH, {
      operationId: 'register',
      summary: 'Register an organization',
      description:
        'Returns the API key and the webhook secret, shown once. Limited per client ' +
        'address and hour (X-RateLimit headers).',
      requestBody: jsonBody(
        object(
          {
            name: str(undefined, { maxLength: 200 }),
            email: str(undefined, { format: 'email', maxLength: 320 }),
            walletAddress: {
              ...SCHEMA_PARTS.wallet,
              description: "the organization's own deposit address; generated when omitted",
            },
            signingPublicKey: str('PEM public key that verifies signed viewer tokens', { maxLength: 20_000 }),
            signingAlgorithm: { type: 'string', enum: ['RS256', 'ES256'], default: 'RS256' },
            webhookUrl: str('http(s) URL; private addresses are refused unless the server allows them', {
              format: 'uri',
              maxLength: 2000,
            }),
            plan: {
              type: 'string',
              enum: [...PLAN_CODES],
              description: 'paid or professional (the Paid plan); the others are assigned by a platform admin',
            },
            scopes: {
              ...SCHEMA_PARTS.scopes,
              minItems: 1,
              description: "the first key's scopes; all four when omitted",
            },
          },
          ['email', 'walletAddress', 'signingPublicKey', 'signingAlgorithm', 'webhookUrl', 'plan', 'scopes'],
        ),
        registerExample,
      ),
      responses: { '201': jsonResponse('registered', ref('Registration')), '429': errorResponse('RateLimited') },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/auth/verify',
    operation: keyed('any', AUTH, {
      operationId: 'verifyKey',
      summary: 'The key, its organization, plan, scopes and rate limits',
      responses: { '200': jsonResponse('the key is valid', ref('Verification')) },
    }),
  },
  {
    method: 'post',
    path: '/api/v1/auth/rotate',
    operation: keyed('any', AUTH, {
      operationId: 'rotateKey',
      summary: 'Rotate the API key',
      description:
        'The old key stops working at once; at most one rotation an hour (429 ROTATION_COOLDOWN with Retry-After).',
      responses: { '200': jsonResponse('the new key, shown once', ref('Rotation')) },
    }),
  },
  {
    method: 'get',
    path: '/api/v1/billing/plans',
    operation: open('Billing', {
      operationId: 'listPlans',
      summary: 'The plans and their prices',
      responses: { '200': jsonResponse('the plan list', object({ plans: arrayOf(ref('Plan')) })) },
    }),
  },
];

export const PUBLIC_ENDPOINTS: Endpoint[] = [...operations, ...auth];
