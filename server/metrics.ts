import type { Context as HonoContext } from 'hono';
import { Counter, Gauge, Registry } from 'prom-client';
import type { Context } from '../src/context.js';
import type { TrafficMeter } from '../src/domain/operations/traffic-meter.js';
import type { AppEnv } from './env.js';
import { requestTally } from './request-tally.js';

/**
 * The app's Prometheus metrics (GET /metrics), in a registry of its own (no global one): requests
 * by route pattern (never an id or a query) and status, their latency, sessions made, segment
 * bytes sent, and at scrape time the forensics queue and the webhook outbox by status.
 */
export interface AppMetrics {
  /** the whole exposition, in Prometheus' text format */
  text(): Promise<string>;
  contentType: string;
  /** counts a request that was answered on a route (its pattern), from `started` (performance.now()) */
  observe(c: HonoContext<AppEnv>, route: string, started: number): void;
  sessionCreated(): void;
  segmentSent(bytes: number, sessionId?: string): void;
}

/** Routes of the operators' tools, left out of the live view's traffic (Prometheus still counts them). */
const OPERATIONS_ROUTES = new Set(['/health', '/ready', '/metrics', '/openapi.json', '/api/v1/admin/overview']);

/** `traffic`, when given, also counts the service's requests into the database's buckets that `drm top` reads. */
export function createMetrics(ctx: Context, traffic?: TrafficMeter): AppMetrics {
  const registry = new Registry();
  const registers = [registry];
  const tally = requestTally();
  const byStatus = (name: string, help: string, count: () => Promise<Record<string, number>>) =>
    new Gauge({
      name,
      help,
      labelNames: ['status'],
      registers,
      async collect() {
        this.reset();
        for (const [status, n] of Object.entries(await count())) this.set({ status }, n);
      },
    });
  byStatus('drm_forensic_cases', 'forensic cases by status (processing: waiting or running)', () =>
    ctx.repos.forensicCases.countByStatus(),
  );
  byStatus('drm_webhook_deliveries', 'webhook deliveries by status', () => ctx.repos.webhookDeliveries.countByStatus());
  // The route is the matched pattern (/api/v1/stream/:contentId/segment/:seg), so ids never become labels.
  const observe = (c: HonoContext<AppEnv>, route: string, started: number) => {
    const status = c.res.status;
    tally.count(c.req.method, route, status, (performance.now() - started) / 1000);
    // The live view's traffic is the service's: probes, scrapes and the live view's own polling are not.
    if (!OPERATIONS_ROUTES.has(route)) traffic?.request(status);
  };
  const sessionsCreated = new Counter({ name: 'drm_sessions_created_total', help: 'stream sessions made', registers });
  const segmentBytes = new Counter({
    name: 'drm_segment_bytes_total',
    help: 'segment bytes sent to players',
    registers,
  });
  return {
    text: async () => `${tally.exposition()}\n${await registry.metrics()}`,
    contentType: registry.contentType,
    observe,
    sessionCreated() {
      sessionsCreated.inc();
      traffic?.sessionStarted();
    },
    segmentSent(bytes, sessionId) {
      segmentBytes.inc(bytes);
      traffic?.segmentBytes(bytes, sessionId);
    },
  };
}
