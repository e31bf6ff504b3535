import type { Context } from '../../context.js';
import { iso } from '../../clock.js';
import { formatApusd } from '../billing/format.js';
import { periodLabel, periodOf } from '../billing/periods.js';
import { type IngestQueue, readIngestQueue } from './ingest-overview.js';
import { type PlayingSession, readNowPlaying } from './now-playing.js';
import { TRAFFIC_BUCKET_MS } from './traffic-meter.js';

/** The traffic rates read the last minute of whole buckets. */
const TRAFFIC_WINDOW_BUCKETS = 12;
/** The period's totals scan a month of sessions: read at most this often, not on every refresh. */
const BILLING_EVERY_MS = 15_000;
const RECENT_CASES = 8;

export interface QueuedCase {
  caseId: string;
  contentId: string;
  state: 'waiting' | 'running';
  /** what a running analysis is doing (decode, detect, match), as its worker last wrote it */
  stage: string | null;
  percent: number | null;
  queuedAt: string;
}

export interface BillingTotals {
  period: string;
  periodStart: string;
  periodEnd: string;
  streams: number;
  bytes: number;
  organizations: number;
  openInvoices: number;
  openInvoicesApusd: string;
}

/** What the live view shows: one read of the database, the same on every server. */
export interface Overview {
  at: string;
  sessions: {
    /** sessions sent a segment in the traffic window, neither ended nor expired */
    active: number;
    /** sessions neither ended nor expired, playing or not (a finished download stays open until it expires) */
    open: number;
  };
  /** the newest active sessions (at most 10): content, the organization's own viewer name, bytes per second */
  nowPlaying: PlayingSession[];
  traffic: {
    windowSeconds: number;
    requestsPerMinute: number;
    clientErrorsPerMinute: number;
    serverErrorsPerMinute: number;
    streamsPerMinute: number;
    segmentBytesPerSecond: number;
    /** servers running in the window: each writes its bucket every five seconds, idle or not */
    servers: number;
  };
  forensics: { waiting: number; running: number; queue: QueuedCase[] };
  ingest: IngestQueue;
  webhooks: { backlog: number; retrying: number; failed: number; delivered: number };
  recentCases: Array<{
    caseId: string;
    contentId: string;
    organizationId: string | null;
    status: string;
    classification: string | null;
    binaryId: string | null;
    createdAt: string;
  }>;
  billing: BillingTotals;
}

/** Reads overviews for one context, keeping the costly billing totals for a few seconds. */
export class OverviewReader {
  private billing: { at: number; totals: BillingTotals } | undefined;

  constructor(private readonly ctx: Context) {}

  async read(): Promise<Overview> {
    const { repos, clock } = this.ctx;
    const now = clock.now();
    const window = trafficWindow(now);
    const [open, playing, traffic, counts, queued, ingest, deliveries, recent, billing] = await Promise.all([
      repos.overview.openSessions(now),
      readNowPlaying(this.ctx, window.from, window.to, now),
      this.traffic(window),
      repos.overview.queueCounts(now),
      repos.overview.queuedCases(now),
      readIngestQueue(this.ctx, now),
      repos.webhookDeliveries.countByStatus(),
      repos.overview.recentCases(RECENT_CASES),
      this.billingTotals(now),
    ]);
    const queue = queued.map((row) => queuedCase(row, now));
    return {
      at: iso(now),
      sessions: { active: playing.active, open },
      nowPlaying: playing.playing,
      traffic,
      forensics: { ...counts, queue },
      ingest,
      webhooks: {
        backlog: (deliveries.pending ?? 0) + (deliveries.retrying ?? 0),
        retrying: deliveries.retrying ?? 0,
        failed: deliveries.failed ?? 0,
        delivered: deliveries.delivered ?? 0,
      },
      recentCases: recent.map((r) => ({
        caseId: r.id,
        contentId: r.contentId,
        organizationId: r.organizationId,
        status: r.status,
        classification: r.classification,
        binaryId: r.binaryId,
        createdAt: iso(r.createdAt),
      })),
      billing,
    };
  }

  private async traffic({ from, to }: { from: number; to: number }): Promise<Overview['traffic']> {
    const t = await this.ctx.repos.traffic.totalsBetween(from, to);
    const seconds = (to - from) / 1000;
    const perMinute = (n: number) => Math.round((n * 600) / seconds) / 10;
    return {
      windowSeconds: seconds,
      requestsPerMinute: perMinute(t.requests),
      clientErrorsPerMinute: perMinute(t.clientErrors),
      serverErrorsPerMinute: perMinute(t.serverErrors),
      streamsPerMinute: perMinute(t.sessionsStarted),
      segmentBytesPerSecond: Math.round(t.segmentBytes / seconds),
      servers: t.servers,
    };
  }

  private async billingTotals(now: number): Promise<BillingTotals> {
    if (this.billing && now - this.billing.at < BILLING_EVERY_MS && now >= this.billing.at) return this.billing.totals;
    const period = periodOf(now);
    const [usage, open] = await Promise.all([
      this.ctx.repos.overview.streamsBetween(period.start, period.end),
      this.ctx.repos.overview.openInvoices(),
    ]);
    const totals: BillingTotals = {
      period: periodLabel(period),
      periodStart: iso(period.start),
      periodEnd: iso(period.end),
      ...usage,
      openInvoices: open.count,
      openInvoicesApusd: formatApusd(open.amountMicro),
    };
    this.billing = { at: now, totals };
    return totals;
  }
}

/**
 * The last whole minute of buckets: the one still filling is left out, since its counts reach the
 * database only at the next flush and would read low.
 */
function trafficWindow(now: number): { from: number; to: number } {
  const to = Math.floor(now / TRAFFIC_BUCKET_MS) * TRAFFIC_BUCKET_MS;
  return { from: to - TRAFFIC_WINDOW_BUCKETS * TRAFFIC_BUCKET_MS, to };
}

type QueuedRow = Awaited<ReturnType<Context['repos']['overview']['queuedCases']>>[number];

function queuedCase(row: QueuedRow, now: number): QueuedCase {
  const running = row.leaseUntil !== null && row.leaseUntil > now;
  const progress = running ? parseProgress(row.progress) : null;
  return {
    caseId: row.id,
    contentId: row.contentId,
    state: running ? 'running' : 'waiting',
    stage: progress?.stage ?? null,
    percent: progress && progress.total > 0 ? Math.min(100, Math.round((progress.done / progress.total) * 100)) : null,
    queuedAt: iso(row.createdAt),
  };
}

function parseProgress(raw: string | null): { stage: string; done: number; total: number } | null {
  if (!raw) return null;
  try {
    const p = JSON.parse(raw) as { stage?: unknown; done?: unknown; total?: unknown };
    if (typeof p.stage !== 'string' || typeof p.done !== 'number' || typeof p.total !== 'number') return null;
    return { stage: p.stage, done: p.done, total: p.total };
  } catch {
    return null;
  }
}
