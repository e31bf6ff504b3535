import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INVALID_FIELDS, INVALID_QUERIES } from '../helpers/bad-input-cases.js';
import { makeTestApp, type TestApp } from '../helpers/context.js';
import { API_ENDPOINTS, type ApiEndpoint, routeShape, unfillable } from '../helpers/openapi-endpoints.js';

// Every route the app registers is described once, in server/openapi/paths-*.ts, and the abuse
// and bad-input suites walk what that description says (test/helpers/openapi-endpoints.ts): a
// route is in the abuse table when it is described and a fixture can fill each of its ids, and in
// the bad-input table when it is described and, if it reads a body or a query, has invalid cases
// of its own (test/helpers/bad-input-cases.ts). This test holds hono's list of routes against
// both, so that a new route cannot escape them.
//
// Left out of the comparison: hono lists middleware (`app.use`) with method ALL; no route is
// registered with `app.all` or `app.on` (openapi-drift.test.ts checks that), so ALL entries are all
// middleware. No route is an exception: the operational ones (/health, /ready, /metrics,
// /openapi.json) and the players' capability URLs are described like the others, and the abuse
// suite walks them by who may call them (an open one ignores credentials it does not ask for; a
// capability URL checks its session).

interface Route {
  method: string;
  path: string;
}

const rowsFor = (table: ReadonlyArray<readonly [string, ...unknown[]]>, e: ApiEndpoint) =>
  table.filter(([name]) => name === e.name).length;

/** What keeps each registered route out of the tables, one line per route and table. */
function gaps(routes: readonly Route[], endpoints: readonly ApiEndpoint[]): string[] {
  const shapes = [...new Set(routes.filter((r) => r.method !== 'ALL').map((r) => routeShape(r.method, r.path)))];
  return shapes.sort().flatMap((shape) => {
    const e = endpoints.find((x) => routeShape(x.method, x.path) === shape);
    if (!e) return [`${shape}: not in the OpenAPI document, so in neither the abuse nor the bad-input table`];
    const ids = unfillable(e);
    return [
      ...(ids.length > 0 ? [`${e.name}: not in the abuse table: no fixture names {${ids.join('}, {')}}`] : []),
      ...(e.body && rowsFor(INVALID_FIELDS, e) === 0
        ? [`${e.name}: reads a body, but the bad-input table has no invalid field for it (INVALID_FIELDS)`]
        : []),
      ...(e.query.length > 0 && rowsFor(INVALID_QUERIES, e) === 0
        ? [`${e.name}: takes a query, but the bad-input table has no invalid query for it (INVALID_QUERIES)`]
        : []),
    ];
  });
}

describe('the routes the app registers, against the abuse and bad-input tables', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp('sqlite');
  });
  afterAll(() => t.close());

  it('finds every registered route described, and in both tables', () => {
    expect(t.app.routes.filter((r) => r.method !== 'ALL').length).toBeGreaterThan(50);
    expect(gaps(t.app.routes, API_ENDPOINTS)).toEqual([]);
  });

  it('has no invalid case for an endpoint that is not described (a stale row)', () => {
    const names = new Set(API_ENDPOINTS.map((e) => e.name));
    const stale = [...INVALID_FIELDS, ...INVALID_QUERIES].map(([name]) => name).filter((n) => !names.has(n));
    expect(stale).toEqual([]);
  });

  it('would name a route added without its description, without a fixture for its id, or without invalid cases', () => {
    const widget: ApiEndpoint = {
      ...(API_ENDPOINTS.find((e) => e.name === 'POST /api/v1/billing/fund') as ApiEndpoint),
      name: 'POST /api/v1/widgets/{widgetId}',
      path: '/api/v1/widgets/{widgetId}',
      params: ['widgetId'],
      query: ['async'],
    };
    const routes = [
      ...t.app.routes,
      { method: 'GET', path: '/api/v1/dummy' },
      { method: 'POST', path: '/api/v1/widgets/:widgetId' },
    ];
    expect(gaps(routes, [...API_ENDPOINTS, widget])).toEqual([
      'GET /api/v1/dummy: not in the OpenAPI document, so in neither the abuse nor the bad-input table',
      'POST /api/v1/widgets/{widgetId}: not in the abuse table: no fixture names {widgetId}',
      'POST /api/v1/widgets/{widgetId}: reads a body, but the bad-input table has no invalid field for it (INVALID_FIELDS)',
      'POST /api/v1/widgets/{widgetId}: takes a query, but the bad-input table has no invalid query for it (INVALID_QUERIES)',
    ]);
  });
});
