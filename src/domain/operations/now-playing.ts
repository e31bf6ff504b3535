import { iso } from '../../clock.js';
import type { Context } from '../../context.js';
import type { PlayingRow } from '../../db/repos/index.js';
import { TRAFFIC_BUCKET_MS } from './traffic-meter.js';

/** How many playing sessions the live view lists: the newest. */
export const LISTED_PLAYING = 10;

/** A session that is playing, as the live view lists it: what, for whom, how fast. */
export interface PlayingSession {
  sessionId: string;
  organizationId: string;
  organizationName: string;
  contentId: string;
  title: string;
  /** the organization's own name for the viewer (the viewerId it passed, or its token's sub) */
  externalViewerId: string;
  /** the platform's id of the viewer */
  viewerId: string;
  startedAt: string;
  /** segment bytes sent to it per second, over the window (or since it started, when that is later) */
  bytesPerSecond: number;
}

export interface NowPlaying {
  /** sessions sent a segment in the window that have neither ended nor expired */
  active: number;
  /** the newest of them */
  playing: PlayingSession[];
}

/**
 * A session is active while its player fetches segments: one that was sent none in the window
 * (a finished download, a paused or closed player) is not, even before it expires. The window is
 * [from, to) of whole traffic buckets, where the servers write each session's segment bytes.
 */
export async function readNowPlaying(ctx: Context, from: number, to: number, now: number): Promise<NowPlaying> {
  const traffic = ctx.repos.traffic;
  const [active, rows] = await Promise.all([
    traffic.countPlaying(from, to, now),
    traffic.newestPlaying(from, to, now, LISTED_PLAYING),
  ]);
  return { active, playing: rows.map((r) => playingSession(r, from, to)) };
}

function playingSession(r: PlayingRow, from: number, to: number): PlayingSession {
  // A session that started inside the window is measured from its first bucket, not the window's.
  const since = Math.max(from, Math.floor(r.createdAt / TRAFFIC_BUCKET_MS) * TRAFFIC_BUCKET_MS);
  const seconds = Math.max(TRAFFIC_BUCKET_MS, to - since) / 1000;
  return {
    sessionId: r.sessionId,
    organizationId: r.organizationId,
    organizationName: r.organizationName,
    contentId: r.contentId,
    title: r.title,
    externalViewerId: r.externalViewerId,
    viewerId: r.viewerId,
    startedAt: iso(r.createdAt),
    bytesPerSecond: Math.round(r.bytes / seconds),
  };
}
