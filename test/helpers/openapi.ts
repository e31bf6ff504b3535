// A structural check of an OpenAPI 3.1 document and a checker for the subset of JSON Schema the
// service's document uses. Small on purpose: a full validator would be a heavy dependency for
// what these tests ask (refs resolve, ids unique, bodies match the described shapes).

type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The object a local `$ref` ('#/a/b') points at, or undefined. */
export function resolvePointer(doc: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = doc;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof at !== 'object' || at === null || !(key in at)) return undefined;
    at = (at as Json)[key];
  }
  return at;
}

/** Follows `$ref`s until an object without one. */
export function deref<T = Json>(doc: Json, value: unknown): T {
  let at = value as Json;
  for (let i = 0; i < 20 && typeof at?.$ref === 'string'; i++) at = resolvePointer(doc, at.$ref as string) as Json;
  return at as T;
}

function everyRef(value: unknown, where: string, out: Array<[string, string]>): void {
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) everyRef(v, `${where}/${i}`, out);
  } else if (typeof value === 'object' && value !== null) {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.push([where, v]);
      else everyRef(v, `${where}/${k}`, out);
    }
  }
}

function operationProblems(doc: Json, path: string, method: string, op: Json, seenIds: Set<string>): string[] {
  const where = `${method.toUpperCase()} ${path}`;
  const problems: string[] = [];
  const id = op.operationId as string | undefined;
  if (!id) problems.push(`${where}: no operationId`);
  else if (seenIds.has(id)) problems.push(`${where}: operationId ${id} is used twice`);
  else seenIds.add(id);
  const responses = (op.responses ?? {}) as Json;
  if (Object.keys(responses).length === 0) problems.push(`${where}: no responses`);
  for (const [status, r] of Object.entries(responses)) {
    if (!/^([1-5](\d\d|XX)|default)$/.test(status)) problems.push(`${where}: response key ${status}`);
    if (typeof deref(doc, r).description !== 'string') problems.push(`${where} ${status}: no description`);
  }
  const tags = new Set(((doc.tags ?? []) as Json[]).map((t) => t.name));
  for (const t of (op.tags ?? []) as string[]) if (!tags.has(t)) problems.push(`${where}: tag ${t} is not declared`);
  const schemes = ((doc.components as Json)?.securitySchemes ?? {}) as Json;
  for (const req of (op.security ?? []) as Json[])
    for (const name of Object.keys(req))
      if (!(name in schemes)) problems.push(`${where}: security scheme ${name} is not declared`);
  const params = ((op.parameters ?? []) as Json[]).map((p) => deref(doc, p));
  const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
  for (const name of templated) {
    const p = params.find((x) => x.in === 'path' && x.name === name);
    if (p?.required !== true) problems.push(`${where}: path parameter ${name} is not declared as required`);
  }
  for (const p of params) {
    if (p.in === 'path' && !templated.includes(p.name as string))
      problems.push(`${where}: path parameter ${String(p.name)} is not in the path`);
    if (!p.schema) problems.push(`${where}: parameter ${String(p.name)} has no schema`);
  }
  const body = op.requestBody as Json | undefined;
  if (body && Object.keys((deref(doc, body).content ?? {}) as Json).length === 0)
    problems.push(`${where}: requestBody without content`);
  return problems;
}

/** What keeps `doc` from being a well-formed OpenAPI 3.1 document (empty when nothing). */
export function structuralProblems(doc: Json): string[] {
  const problems: string[] = [];
  if (doc.openapi !== '3.1.0') problems.push(`openapi is ${String(doc.openapi)}, not 3.1.0`);
  const info = doc.info as Json | undefined;
  if (typeof info?.title !== 'string' || typeof info?.version !== 'string')
    problems.push('info needs title and version');
  const seenIds = new Set<string>();
  const shapes = new Map<string, string>();
  for (const [path, item] of Object.entries((doc.paths ?? {}) as Json)) {
    if (!path.startsWith('/')) problems.push(`path ${path} does not start with /`);
    // OpenAPI: templated paths that differ only in their parameters' names are the same path.
    const shape = path.replace(/\{[^}]+\}/g, '{}');
    if (shapes.has(shape)) problems.push(`paths ${shapes.get(shape)} and ${path} are the same template`);
    shapes.set(shape, path);
    for (const [method, op] of Object.entries(item as Json)) {
      if (!METHODS.includes(method)) problems.push(`${path}: ${method} is not an HTTP method`);
      else problems.push(...operationProblems(doc, path, method, op as Json, seenIds));
    }
  }
  // The requests the server sends (OpenAPI 3.1 `webhooks`): operations like any other.
  for (const [name, item] of Object.entries((doc.webhooks ?? {}) as Json)) {
    for (const [method, op] of Object.entries(item as Json))
      problems.push(...operationProblems(doc, `webhook ${name}`, method, op as Json, seenIds));
  }
  const refs: Array<[string, string]> = [];
  everyRef(doc, '#', refs);
  for (const [where, ref] of refs)
    if (resolvePointer(doc, ref) === undefined) problems.push(`${where}: $ref ${ref} does not resolve`);
  return problems;
}

const typeOf = (v: unknown) =>
  v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v;
const typeMatches = (actual: string, wanted: string) =>
  actual === wanted || (wanted === 'number' && actual === 'integer');

/** The property names a schema documents, through allOf and $ref. */
function documented(doc: Json, schema: Json): Set<string> | 'any' {
  const s = deref(doc, schema);
  if (s.additionalProperties !== undefined && s.additionalProperties !== false) return 'any';
  const names = new Set(Object.keys((s.properties ?? {}) as Json));
  for (const part of (s.allOf ?? []) as Json[]) {
    const more = documented(doc, part);
    if (more === 'any') return 'any';
    for (const n of more) names.add(n);
  }
  return names;
}

/**
 * What in `value` disagrees with `schema` (empty when nothing). Stricter than JSON Schema in one
 * way: an object property the schema does not document is a problem, so that a field added to a
 * response without its description is caught.
 */
export function schemaProblems(doc: Json, value: unknown, schema: Json, at = '$', strict = true): string[] {
  const s = deref(doc, schema);
  const problems: string[] = [];
  const actual = typeOf(value);
  if (s.type !== undefined) {
    const wanted = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
    if (!wanted.some((w) => typeMatches(actual, w))) return [`${at}: ${actual}, not ${wanted.join(' or ')}`];
  }
  if (s.const !== undefined && value !== s.const)
    problems.push(`${at}: ${JSON.stringify(value)}, not ${JSON.stringify(s.const)}`);
  if (Array.isArray(s.enum) && !s.enum.includes(value))
    problems.push(`${at}: ${JSON.stringify(value)} is not one of ${s.enum.join(', ')}`);
  if (typeof value === 'string' && typeof s.pattern === 'string' && !new RegExp(s.pattern).test(value))
    problems.push(`${at}: ${JSON.stringify(value)} does not match ${s.pattern}`);
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) problems.push(`${at}: ${value} < ${s.minimum}`);
    if (typeof s.maximum === 'number' && value > s.maximum) problems.push(`${at}: ${value} > ${s.maximum}`);
  }
  for (const part of (s.allOf ?? []) as Json[]) problems.push(...schemaProblems(doc, value, part, at, false));
  for (const key of ['anyOf', 'oneOf'] as const) {
    const branches = (s[key] ?? []) as Json[];
    const fits = branches.filter((b) => schemaProblems(doc, value, b, at, strict).length === 0).length;
    if (branches.length > 0 && fits === 0)
      problems.push(
        `${at}: fits none of ${key}: ${branches.flatMap((b) => schemaProblems(doc, value, b, at, strict)).join('; ')}`,
      );
    if (key === 'oneOf' && fits > 1) problems.push(`${at}: fits ${fits} branches of oneOf`);
  }
  if (actual === 'object') problems.push(...objectProblems(doc, value as Json, s, at, strict));
  if (actual === 'array' && s.items)
    problems.push(...(value as unknown[]).flatMap((v, i) => schemaProblems(doc, v, s.items as Json, `${at}[${i}]`)));
  return problems;
}

function objectProblems(doc: Json, value: Json, s: Json, at: string, strict: boolean): string[] {
  const problems: string[] = [];
  for (const r of (s.required ?? []) as string[]) if (!(r in value)) problems.push(`${at}.${r}: missing`);
  const props = (s.properties ?? {}) as Json;
  for (const [k, v] of Object.entries(value)) {
    if (props[k]) problems.push(...schemaProblems(doc, v, props[k] as Json, `${at}.${k}`));
    else if (typeof s.additionalProperties === 'object')
      problems.push(...schemaProblems(doc, v, s.additionalProperties as Json, `${at}.${k}`));
  }
  // Only where the schema describes an object's fields (a branch of anyOf for null does not).
  const names = strict && (s.properties || s.allOf) ? documented(doc, s) : 'any';
  if (names !== 'any')
    for (const k of Object.keys(value)) if (!names.has(k)) problems.push(`${at}.${k}: not documented`);
  return problems;
}
