import os from 'node:os';
import type { Context } from '../../context.js';
import type { SessionTrafficRow, TrafficRow } from '../../db/repos/index.js';
import { errorFields } from '../../log.js';
import { RepeatingPass } from '../repeating-pass.js';

/** Buckets are this long; the live view reads the last minute of them. */
export const TRAFFIC_BUCKET_MS = 5_000;
/** Buckets are kept this long (the live view needs a minute; the rest is for a look back). */
const KEPT_MS = 60 * 60 * 1000;

/**
 * Session rows per insert: SQLite binds at most 32,766 values to a statement (a busy server has a row per session
 * playing).
 */
const ROWS_PER_STATEMENT = 1000;

type Counts = Omit<TrafficRow, 'bucketStart' | 'instanceId'>;
const empty = (): Counts => ({ requests: 0, clientErrors: 0, serverErrors: 0, segmentBytes: 0, sessionsStarted: 0 });

/**
 * Counts this server's traffic in memory and adds it to the database's buckets every five
 * seconds, so that `drm top` on the database sees every server's requests, errors, segment bytes
 * and new streams without a write per request. Segment bytes are also counted per session (the
 * live view's now-playing list and its active sessions read them). Every flush writes this
 * server's bucket, empty when it was idle, so that the servers in the window are the servers
 * running. Counts a flush could not write are kept for the next one, and stop() writes the last.
 */
export class TrafficMeter {
  /** bucket start → this server's counts */
  private pending = new Map<number, Counts>();
  /** bucket start → session → segment bytes */
  private pendingSessions = new Map<number, Map<string, number>>();
  private readonly pass: RepeatingPass;
  private lastPrune = 0;
  private stopping = false;

  constructor(
    private readonly ctx: Context,
    readonly instanceId = `${os.hostname()}:${process.pid}`,
  ) {
    this.pass = new RepeatingPass(
      () => this.flush(),
      TRAFFIC_BUCKET_MS,
      (err) => ctx.log.warn('traffic counts not written; kept for the next try', errorFields(err)),
    );
  }

  request(status: number): void {
    const c = this.current();
    c.requests += 1;
    if (status >= 500) c.serverErrors += 1;
    else if (status >= 400) c.clientErrors += 1;
  }

  /** Bytes of a segment sent: the server's, and the session's when there is one. */
  segmentBytes(bytes: number, sessionId?: string): void {
    this.current().segmentBytes += bytes;
    if (sessionId === undefined) return;
    const sessions = this.sessionsOf(this.bucketNow());
    sessions.set(sessionId, (sessions.get(sessionId) ?? 0) + bytes);
  }

  sessionStarted(): void {
    this.current().sessionsStarted += 1;
  }

  start(): void {
    this.pass.start();
  }

  async stop(): Promise<void> {
    // The last flush writes what was counted, but no heartbeat: a stopped server is not running.
    this.stopping = true;
    await this.pass.stop();
    await this.pass.tick();
  }

  /** Writes what was counted (tests call it directly; the server every five seconds). */
  async flush(): Promise<void> {
    if (!this.stopping) this.current();
    await this.writeSessions();
    const taken = this.pending;
    this.pending = new Map();
    const rows = [...taken].map(([bucketStart, counts]) => ({ bucketStart, instanceId: this.instanceId, ...counts }));
    try {
      await this.ctx.repos.traffic.add(rows);
    } catch (err) {
      for (const row of rows) this.merge(row);
      throw err;
    }
    await this.pruneNowAndThen();
  }

  /**
   * A statement of at most ROWS_PER_STATEMENT rows is written whole or not at all: what one that
   * failed and those after it held is kept, and nothing written is counted twice.
   */
  private async writeSessions(): Promise<void> {
    const taken = this.pendingSessions;
    this.pendingSessions = new Map();
    const rows: SessionTrafficRow[] = [...taken].flatMap(([bucketStart, sessions]) =>
      [...sessions].map(([sessionId, segmentBytes]) => ({ bucketStart, sessionId, segmentBytes })),
    );
    for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
      try {
        await this.ctx.repos.traffic.addSessions(rows.slice(i, i + ROWS_PER_STATEMENT));
      } catch (err) {
        for (const row of rows.slice(i)) {
          const sessions = this.sessionsOf(row.bucketStart);
          sessions.set(row.sessionId, (sessions.get(row.sessionId) ?? 0) + row.segmentBytes);
        }
        throw err;
      }
    }
  }

  private async pruneNowAndThen(): Promise<void> {
    const now = this.ctx.clock.now();
    if (now - this.lastPrune <= 60_000) return;
    this.lastPrune = now;
    // Old buckets only cost space: a failed prune is said as such and tried again in a minute.
    await this.ctx.repos.traffic
      .prune(now - KEPT_MS)
      .catch((err) => this.ctx.log.warn('old traffic buckets not pruned', errorFields(err)));
  }

  private bucketNow(): number {
    return Math.floor(this.ctx.clock.now() / TRAFFIC_BUCKET_MS) * TRAFFIC_BUCKET_MS;
  }

  private current(): Counts {
    const bucket = this.bucketNow();
    const counts = this.pending.get(bucket) ?? empty();
    this.pending.set(bucket, counts);
    return counts;
  }

  private sessionsOf(bucket: number): Map<string, number> {
    const sessions = this.pendingSessions.get(bucket) ?? new Map<string, number>();
    this.pendingSessions.set(bucket, sessions);
    return sessions;
  }

  private merge({ bucketStart, instanceId: _, ...counts }: TrafficRow): void {
    const into = this.pending.get(bucketStart) ?? empty();
    for (const k of Object.keys(counts) as Array<keyof Counts>) into[k] += counts[k];
    this.pending.set(bucketStart, into);
  }
}
