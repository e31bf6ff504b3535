import { Agent, request } from 'undici';

// The load generator of bench:serve's delivery part: N players at once, each playing sessions
// one after another as a player does: it opens a session, fetches the playlist, then every
// segment the playlist names in order, following redirects (so that in redirect mode the bytes
// are counted where they come from: the store). No key request, no decryption. Each player has
// one request in flight at a time, on keep-alive connections (undici, up to N per origin).

export interface Tally {
  /** sessions played through (playlist and every segment answered 200) */
  sessions: number;
  /** segments fetched whole */
  segments: number;
  /** HTTP requests made, redirects and the session's POST included */
  requests: number;
  /** response bytes of the playlists and segments received (bodies; the store's in redirect mode) */
  bytes: number;
  /** non-2xx answers, broken transfers, more than 3 redirects */
  errors: number;
  /** wall time from the first request to the last player's last byte */
  seconds: number;
}

/** Opens player p's next session and resolves to its playlist's absolute URL (counts its own requests). */
export type OpenSession = (player: number, agent: Agent, tally: Tally) => Promise<string>;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** GETs a URL, following up to 3 redirects; counts the final body's bytes, and keeps it as text when asked. */
async function get(agent: Agent, url: string, tally: Tally, keep = false): Promise<string | undefined> {
  let target = url;
  for (let hop = 0; hop <= 3; hop++) {
    const res = await request(target, { dispatcher: agent });
    tally.requests++;
    if (REDIRECTS.has(res.statusCode)) {
      await res.body.dump();
      const location = res.headers.location;
      target = new URL(Array.isArray(location) ? (location[0] as string) : (location as string), target).href;
      continue;
    }
    if (res.statusCode !== 200) {
      await res.body.dump();
      tally.errors++;
      return undefined;
    }
    const kept: Buffer[] = [];
    for await (const chunk of res.body as AsyncIterable<Buffer>) {
      tally.bytes += chunk.length;
      if (keep) kept.push(chunk);
    }
    return keep ? Buffer.concat(kept).toString('utf8') : '';
  }
  tally.errors++;
  return undefined;
}

/** The absolute URLs of a playlist's segments (its lines that are not tags or blank). */
export function segmentUrls(playlist: string, base: string): string[] {
  return playlist
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => new URL(l, base).href);
}

async function player(p: number, plays: number, open: OpenSession, agent: Agent, tally: Tally): Promise<void> {
  for (let k = 0; k < plays; k++) {
    const playlistUrl = await open(p, agent, tally);
    const playlist = await get(agent, playlistUrl, tally, true);
    if (playlist === undefined) continue;
    let whole = true;
    for (const url of segmentUrls(playlist, playlistUrl)) {
      if ((await get(agent, url, tally)) === undefined) whole = false;
      else tally.segments++;
    }
    if (whole) tally.sessions++;
  }
}

/** `players` players at once, each playing `plays` sessions; resolves when the last one is done. */
export async function play(players: number, plays: number, open: OpenSession): Promise<Tally> {
  const agent = new Agent({ connections: players, pipelining: 1, keepAliveTimeout: 60_000 });
  const tally: Tally = { sessions: 0, segments: 0, requests: 0, bytes: 0, errors: 0, seconds: 0 };
  const started = performance.now();
  try {
    await Promise.all(Array.from({ length: players }, (_, p) => player(p, plays, open, agent, tally)));
  } finally {
    tally.seconds = (performance.now() - started) / 1000;
    await agent.close();
  }
  return tally;
}

/** A drm player's session: POST /api/v1/stream/{id} as its own viewer (the same one every time, so its A/B pattern stays). */
export function drmSession(base: string, contentId: string, apiKey: string): OpenSession {
  return async (p, agent, tally) => {
    const res = await request(`${base}/api/v1/stream/${contentId}`, {
      method: 'POST',
      dispatcher: agent,
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ viewerId: `player-${p}` }),
    });
    tally.requests++;
    const text = await res.body.text();
    if (res.statusCode !== 201) throw new Error(`POST /api/v1/stream/${contentId}: ${res.statusCode} ${text}`);
    return new URL((JSON.parse(text) as { playlistUrl: string }).playlistUrl, base).href;
  };
}
