import type { ApiShape } from '../../src/config.js';
import type { Endpoint, Operation } from './build.js';
import { ERROR_SCHEMAS, HEADERS, RESPONSES, SECURITY_SCHEMES } from './components.js';
import { WEBHOOKS } from './events.js';
import { ADMIN_ENDPOINTS } from './paths-admin.js';
import { ADMIN_BILLING_ENDPOINTS } from './paths-admin-billing.js';
import { BILLING_ENDPOINTS } from './paths-billing.js';
import { FORENSIC_ENDPOINTS } from './paths-forensics.js';
import { OVERVIEW_ENDPOINTS, OVERVIEW_SCHEMAS } from './paths-overview.js';
import { PUBLIC_ENDPOINTS } from './paths-public.js';
import { STREAM_ENDPOINTS } from './paths-stream.js';
import { VIEWER_ENDPOINTS } from './paths-viewers.js';
import { billingSchemas } from './schemas-billing.js';
import { CORE_SCHEMAS } from './schemas-core.js';
import { forensicSchemas } from './schemas-forensics.js';

/**
 * Every endpoint the app serves, each described once: the document is built from this list, and
 * the abuse and bad-input suites read their tables from the document (test/helpers/openapi-
 * endpoints.ts). openapi-drift.test.ts and route-coverage.test.ts hold it against the routes hono
 * registers, so that a route added without its description (or the other way) fails.
 */
export const ENDPOINTS: readonly Endpoint[] = [
  ...PUBLIC_ENDPOINTS,
  ...STREAM_ENDPOINTS,
  ...VIEWER_ENDPOINTS,
  ...BILLING_ENDPOINTS,
  ...FORENSIC_ENDPOINTS,
  ...ADMIN_ENDPOINTS,
  ...ADMIN_BILLING_ENDPOINTS,
  ...OVERVIEW_ENDPOINTS,
];

const TAGS = [
  { name: 'Operations', description: 'Liveness, readiness, metrics and this document' },
  { name: 'Authentication', description: 'Registration and the API key (spec 4.1, 5)' },
  { name: 'Catalog', description: 'Licensed content (scope catalog)' },
  {
    name: 'Streaming',
    description: 'Stream sessions and what players fetch (scope stream; the session id for players)',
  },
  { name: 'Viewers', description: "The organization's viewers (scope stream; search: forensics)" },
  { name: 'Webhooks', description: 'Webhook settings and deliveries (scope billing)' },
  { name: 'Billing', description: 'Plans, usage, balance, invoices, funding, subscriptions (scope billing)' },
  { name: 'Forensics', description: 'Leak analysis and forensic cases (scope forensics)' },
  { name: 'Admin', description: 'The platform operator, signed in with a wallet (SIWE)' },
];

const DESCRIPTION = [
  'Forensic DRM streaming: AES-128 HLS with per-viewer A/B watermarks, leak tracing and billing.',
  '',
  'Errors are `{error, code, status}` (components.schemas.Error). Keyed ' +
    'responses carry X-RateLimit-Limit, X-RateLimit-Remaining and ' +
    'X-RateLimit-Reset.',
  'Where the interface has two shapes, responses carry the union of both; where ' +
    "they collide (forensic confidence, the evidence chain, the case detail's " +
    "nesting) the server's --api-shape decides, and this document is the one for " +
    'the shape the server runs with.',
].join('\n');

export interface DocumentOptions {
  shape: ApiShape;
  /** package.json's version */
  version: string;
  /** --public-url, when set: the one server the document names (else its own origin, OpenAPI's default) */
  publicUrl?: string;
}

/** The OpenAPI 3.1 document of the whole API, for one deployment's shape. */
export function openApiDocument(options: DocumentOptions) {
  const paths: Record<string, Partial<Record<Endpoint['method'], Operation>>> = {};
  for (const e of ENDPOINTS) {
    paths[e.path] ??= {};
    (paths[e.path] as Record<string, Operation>)[e.method] = e.operation;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'drm: forensic DRM streaming service', version: options.version, description: DESCRIPTION },
    ...(options.publicUrl && { servers: [{ url: options.publicUrl.replace(/\/+$/, '') }] }),
    tags: TAGS,
    paths,
    webhooks: WEBHOOKS,
    components: {
      schemas: {
        ...ERROR_SCHEMAS,
        ...CORE_SCHEMAS,
        ...billingSchemas(options.shape),
        ...forensicSchemas(options.shape),
        ...OVERVIEW_SCHEMAS,
      },
      responses: RESPONSES,
      headers: HEADERS,
      securitySchemes: SECURITY_SCHEMES,
    },
  };
}

export type OpenApiDocument = ReturnType<typeof openApiDocument>;
