import { openApiDocument } from '../../server/openapi/document.js';
import { SUSPENDED_MAY } from '../../server/openapi/paths-billing.js';
import type { Scope } from '../../src/domain/scopes.js';
import { deref } from './openapi.js';

// The API's endpoints as the test tables read them. Each endpoint is described once, in
// server/openapi/paths-*.ts; the facts every suite needs (who may call it and with which scope,
// whether it reads a JSON body and which of its fields are strings or numbers, its path and query
// parameters) are read from the document built from those descriptions, so that a route added
// there is walked by the abuse and bad-input suites without being typed into them again. The
// suites keep only what is theirs (the ids of their fixtures, their invalid cases), keyed by
// `name`; test/api/route-coverage.test.ts holds the registered routes against both.

type Json = Record<string, unknown>;

/** Who may call an endpoint: anyone, an API key, a platform admin token, a stream session's capability URL. */
export type Auth = 'none' | 'key' | 'admin' | 'session';

export interface ApiEndpoint {
  /** `METHOD /path` as the document writes it: the key of every test table */
  name: string;
  method: string;
  path: string;
  operationId: string;
  auth: Auth;
  /** the scope a key needs ('any': verify and rotate); keyed endpoints only */
  scope?: Scope | 'any';
  /** the body it reads: JSON, or a multipart upload */
  body?: 'json' | 'form';
  /** whether the body must be sent (an absent optional body is the empty object) */
  bodyRequired: boolean;
  /** the JSON body's properties that are strings (or strings or null) */
  fields: string[];
  /** the JSON body's properties that are numbers */
  numbers: string[];
  /** path parameters, in the path's order */
  params: string[];
  /** query parameters (a capability URL's session is its credential, not one of these) */
  query: string[];
  /** request headers it documents (Idempotency-Key, the card processor's signature) */
  headers: string[];
  /** a key of a suspended organization is let through (the description says so) */
  suspendedMay: boolean;
}

const SCHEMES: Record<string, Auth> = { ApiKey: 'key', AdminToken: 'admin', ViewerSession: 'session' };

const typesOf = (doc: Json, schema: Json): unknown[] =>
  schema.anyOf || schema.oneOf
    ? ([...((schema.anyOf ?? []) as Json[]), ...((schema.oneOf ?? []) as Json[])] as Json[]).flatMap((s) =>
        typesOf(doc, deref(doc, s)),
      )
    : [schema.type];

function bodyFacts(doc: Json, op: Json): Pick<ApiEndpoint, 'body' | 'bodyRequired' | 'fields' | 'numbers'> {
  const requestBody = op.requestBody ? deref(doc, op.requestBody) : undefined;
  const content = (requestBody?.content ?? {}) as Record<string, Json>;
  const bodyRequired = requestBody?.required === true;
  if (content['multipart/form-data']) return { body: 'form', bodyRequired, fields: [], numbers: [] };
  const media = content['application/json'];
  if (!media) return { bodyRequired: false, fields: [], numbers: [] };
  const properties = Object.entries((deref(doc, media.schema).properties ?? {}) as Record<string, Json>).map(
    ([name, schema]) => [name, typesOf(doc, deref(doc, schema))] as const,
  );
  return {
    body: 'json',
    bodyRequired,
    fields: properties.filter(([, types]) => types.includes('string')).map(([name]) => name),
    numbers: properties.filter(([, types]) => types.includes('number') || types.includes('integer')).map(([n]) => n),
  };
}

function endpointFacts(doc: Json, method: string, path: string, op: Json): ApiEndpoint {
  const [scheme, scopes] = Object.entries(((op.security ?? []) as Json[])[0] ?? {})[0] ?? [];
  const auth = scheme ? (SCHEMES[scheme] as Auth) : 'none';
  const parameters = ((op.parameters ?? []) as Json[]).map((p) => deref(doc, p));
  const named = (where: string) => parameters.filter((p) => p.in === where).map((p) => p.name as string);
  return {
    name: `${method.toUpperCase()} ${path}`,
    method: method.toUpperCase(),
    path,
    operationId: op.operationId as string,
    auth,
    ...(auth === 'key' && { scope: ((scopes as Scope[])[0] ?? 'any') as Scope | 'any' }),
    ...bodyFacts(doc, op),
    params: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1] as string),
    query: named('query'),
    headers: named('header'),
    suspendedMay: auth === 'key' && String(op.description ?? '').includes(SUSPENDED_MAY),
  };
}

/** The document of the default shape: the shapes differ in answers, never in who may ask what. */
export const API_DOCUMENT = openApiDocument({ shape: 'b', version: '0.0.0' }) as unknown as Json;

/** Every documented operation, in the document's order. */
export const API_ENDPOINTS: readonly ApiEndpoint[] = Object.entries(API_DOCUMENT.paths as Json).flatMap(
  ([path, item]) =>
    Object.entries(item as Json).map(([method, op]) => endpointFacts(API_DOCUMENT, method, path, op as Json)),
);

export function endpointNamed(name: string): ApiEndpoint {
  const e = API_ENDPOINTS.find((x) => x.name === name);
  if (!e) throw new Error(`no documented endpoint ${name}`);
  return e;
}

/** A route whatever its parameters are called: hono's `/:id` and the document's `/{id}` alike. */
export const routeShape = (method: string, path: string): string =>
  `${method.toUpperCase()} ${path.replace(/:[^/]+/g, '{}').replace(/\{[^}]+\}/g, '{}')}`;

/** What a suite's fixtures name for each kind of resource a path holds. */
export interface PathIds {
  organization: string;
  content: string;
  session: string;
  viewer: string;
  case: string;
  invoice: string;
  subscription: string;
  segment: string;
}

const BY_PARAM: Record<string, keyof PathIds> = {
  contentId: 'content',
  sessionId: 'session',
  viewerId: 'viewer',
  caseId: 'case',
  seg: 'segment',
};

/** A bare `{id}` is named by the path it is in. */
const BY_ID_PATH: Array<[RegExp, keyof PathIds]> = [
  [/^POST \/api\/v1\/stream\/\{id\}$/, 'content'],
  [/^DELETE \/api\/v1\/stream\/\{id\}$/, 'session'],
  [/^\w+ \/api\/v1\/admin\/organizations\/\{id\}\//, 'organization'],
  [/^\w+ \/api\/v1\/admin\/content\/\{id\}$/, 'content'],
  [/^\w+ \/api\/v1\/billing\/invoices\/\{id\}(\/|$)/, 'invoice'],
  [/^\w+ \/api\/v1\/billing\/subscriptions\/\{id\}$/, 'subscription'],
];

/** The kind of resource a path parameter names, or undefined where no fixture can fill it. */
export function resourceOf(e: ApiEndpoint, param: string): keyof PathIds | undefined {
  if (param !== 'id') return BY_PARAM[param];
  return BY_ID_PATH.find(([re]) => re.test(e.name))?.[1];
}

/** The path parameters of the endpoint that no fixture can fill: a suite cannot walk it until one can. */
export const unfillable = (e: ApiEndpoint): string[] => e.params.filter((p) => !resourceOf(e, p));

/** The endpoint's path with the fixtures' ids; `first`, when given, stands in the first parameter (a hostile id). */
export function pathOf(e: ApiEndpoint, ids: PathIds, first?: string): string {
  let at = 0;
  return e.path.replace(/\{([^}]+)\}/g, (_, param: string) => {
    if (at++ === 0 && first !== undefined) return first;
    const resource = resourceOf(e, param);
    if (!resource) throw new Error(`${e.name}: no fixture names the resource of {${param}}`);
    return ids[resource];
  });
}
