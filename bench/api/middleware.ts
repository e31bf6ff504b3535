// What each middleware of a keyed request costs: `npm run bench:middleware -- [--rounds 7] [--requests 20000]`.
//
// Every middleware the app puts before a keyed route (server/app.ts) is put alone in front of one
// constant route of a small hono app, and that app is timed against the same app without it:
// the difference, in microseconds per request, is the middleware's own cost (its work and its
// layer in hono's chain), without HTTP and without the rest of the stack. Requests go through
// app.request(), 50 at a time, on a SQLite test deployment with the app's real context (the key
// check reads the database; rate counting writes it). The rounds alternate the apps, and each
// figure is the median of the rounds. Prints numbers; not a test.
import { type Context as HonoContext, Hono, type MiddlewareHandler } from 'hono';
import { parseArgs } from 'node:util';
import { declaredTooLarge } from '../../server/body.js';
import { onError } from '../../server/errors.js';
import { createMetrics } from '../../server/metrics.js';
import { requireKey } from '../../server/middleware/api-key.js';
import { edge } from '../../server/middleware/edge.js';
import { rateHeadersOnEdgeRefusal } from '../../server/middleware/keyed-refusals.js';
import { logRequest, requestIdOf, routeOf } from '../../server/middleware/request-log.js';
import { reply } from '../../server/reply.js';
import { setRateLimit } from '../../src/domain/admin/organizations.js';
import { createLogger } from '../../src/log.js';
import { makeTestApp } from '../../test/helpers/context.js';
import { registerOrg } from '../../test/helpers/fixtures.js';
import { median } from '../stats.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '7' }, requests: { type: 'string', default: '20000' } },
});
const ROUNDS = Number(values.rounds);
const REQUESTS = Number(values.requests);
const CONCURRENCY = 50;

const t = await makeTestApp('sqlite');
const org = await registerOrg(t);
await setRateLimit(t.ctx, org.organizationId, { rateLimitPerHour: 10_000_000 });
// The access log as `drm serve` writes it (info), to a writer that drops the lines: the line's
// making is counted, the write to stderr is not.
const ctx = t.ctx.derive({ log: createLogger('info', () => {}) });
const BODY = { ok: true, organization: org.organizationId };

const metrics = createMetrics(ctx, t.traffic);
/** One part of the edge middleware alone, in a layer of its own (the layer's cost is the first row). */
const part =
  (before: (c: HonoContext) => unknown, after: (c: HonoContext, started: number, got: unknown) => unknown) =>
  (): MiddlewareHandler =>
  async (c, next) => {
    const started = performance.now();
    const got = before(c);
    await next();
    await after(c, started, got);
  };

const MIDDLEWARE: Array<[name: string, make: () => MiddlewareHandler]> = [
  ['a layer that does nothing (await next())', () => async (_c, next) => next()],
  ['edge, whole: the five parts below in one layer', () => edge(ctx, metrics, onError(ctx.log)) as MiddlewareHandler],
  ['· request id (X-Request-Id)', part(requestIdOf, () => undefined)],
  [
    '· rate headers of a refusal before any route',
    part(
      () => undefined,
      (c) => rateHeadersOnEdgeRefusal(ctx, c),
    ),
  ],
  [
    '· metrics and traffic meter',
    part(
      () => undefined,
      (c, started) => metrics.observe(c, routeOf(c), started),
    ),
  ],
  [
    '· JSON body size limit (the declared length)',
    part(
      (c) => declaredTooLarge(c, ctx.config.maxJsonBytes),
      () => undefined,
    ),
  ],
  [
    '· access log line (info)',
    part(
      () => 'id',
      (c, started) => logRequest(ctx.log, c, routeOf(c), started, 'id'),
    ),
  ],
  ['API key, rate count, scope', () => requireKey(ctx, 'any') as MiddlewareHandler],
];

function appWith(middleware?: MiddlewareHandler): Hono {
  const app = new Hono();
  if (middleware) app.use('*', middleware);
  app.get('/x', (c: HonoContext) => reply(c, BODY));
  return app;
}

/** Microseconds per request through `app`, CONCURRENCY requests at a time. */
async function perRequest(app: Hono): Promise<number> {
  let left = REQUESTS;
  const headers = { authorization: `Bearer ${org.apiKey}` };
  const worker = async () => {
    while (left-- > 0) {
      const res = await app.request('/x', { headers });
      if (res.status !== 200) throw new Error(`answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return ((performance.now() - started) * 1000) / REQUESTS;
}

const bare = appWith();
const apps = MIDDLEWARE.map(([name, make]) => ({ name, app: appWith(make()), costs: [] as number[] }));
const bareTimes: number[] = [];
await perRequest(bare);
for (const a of apps) await perRequest(a.app);
for (let round = 0; round < ROUNDS; round++) {
  for (const a of apps) {
    const without = await perRequest(bare);
    const withIt = await perRequest(a.app);
    bareTimes.push(without);
    a.costs.push(withIt - without);
  }
  process.stderr.write(`bench: round ${round + 1} of ${ROUNDS}\n`);
}
await t.close();

process.stdout.write(
  `Middleware cost: ${REQUESTS} requests a round, ${CONCURRENCY} at a time, through app.request(); median of ${ROUNDS} rounds; ` +
    `the bare app (one constant JSON route): ${median(bareTimes).toFixed(1)} µs a request\n\n` +
    '| middleware | µs a request |\n|---|---|\n' +
    apps.map((a) => `| ${a.name} | ${median(a.costs).toFixed(1)} |`).join('\n') +
    '\n',
);
