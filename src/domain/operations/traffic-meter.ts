import os from 'node:os';
import type { Context } from '../../context.js';
import type { TrafficRow } from '../../db/repos/index.js';
import { errorFields } from '../../log.js';
import { RepeatingPass } from '../repeating-pass.js';

/** Buckets are this long; the live view reads the last minute of them. */
export const TRAFFIC_BUCKET_MS = 5_000;
/** Buckets are kept this long (the live view needs a minute; the rest is for a look back). */
const KEPT_MS = 60 * 60 * 1000;

type Counts = Omit<TrafficRow, 'bucketStart' | 'instanceId'>;
const empty = (): Counts => ({ requests: 0, clientErrors: 0, serverErrors: 0, segmentBytes: 0, sessionsStarted: 0 });

/**
 * Counts this server's traffic in memory and adds it to the database's buckets every five
 * seconds, so that `drm top` on the database sees every server's requests, errors, segment bytes
 * and new streams without a write per request. Counts a flush could not write are kept for the
 * next one, and stop() writes the last.
 */
export class TrafficMeter {
  private pending = new Map<number, Counts>();
  private readonly pass: RepeatingPass;
  private lastPrune = 0;

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

  segmentBytes(bytes: number): void {
    this.current().segmentBytes += bytes;
  }

  sessionStarted(): void {
    this.current().sessionsStarted += 1;
  }

  start(): void {
    this.pass.start();
  }

  async stop(): Promise<void> {
    await this.pass.stop();
    await this.pass.tick();
  }

  /** Writes what was counted (tests call it directly; the server every five seconds). */
  async flush(): Promise<void> {
    const taken = this.pending;
    this.pending = new Map();
    const rows = [...taken].map(([bucketStart, counts]) => ({ bucketStart, instanceId: this.instanceId, ...counts }));
    try {
      await this.ctx.repos.traffic.add(rows);
    } catch (err) {
      for (const [bucket, counts] of taken) this.merge(bucket, counts);
      throw err;
    }
    const now = this.ctx.clock.now();
    if (now - this.lastPrune > 60_000) {
      this.lastPrune = now;
      // Old buckets only cost space: a failed prune is said as such and tried again in a minute.
      await this.ctx.repos.traffic
        .prune(now - KEPT_MS)
        .catch((err) => this.ctx.log.warn('old traffic buckets not pruned', errorFields(err)));
    }
  }

  private current(): Counts {
    const bucket = Math.floor(this.ctx.clock.now() / TRAFFIC_BUCKET_MS) * TRAFFIC_BUCKET_MS;
    const counts = this.pending.get(bucket) ?? empty();
    this.pending.set(bucket, counts);
    return counts;
  }

  private merge(bucket: number, counts: Counts): void {
    const into = this.pending.get(bucket) ?? empty();
    for (const k of Object.keys(counts) as Array<keyof Counts>) into[k] += counts[k];
    this.pending.set(bucket, into);
  }
}
