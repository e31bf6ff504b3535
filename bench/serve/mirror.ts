import fs from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { segmentUrls } from './players.js';

// The nginx side of the delivery part serves the very bytes drm serves: each player's first
// session is opened through drm (proxy), its playlist saved as the static p/<player>.m3u8 with
// each segment line pointing at a/NNNNN.ts or b/NNNNN.ts by the player's 40 bits, and each
// variant of each segment fetched once through drm and written there. A player of nginx then
// fetches the same playlist and the same segment files, request for request, byte for byte.

async function text(url: string, init: Parameters<typeof request>[1] = {}): Promise<{ status: number; body: string }> {
  const res = await request(url, init);
  return { status: res.statusCode, body: await res.body.text() };
}

/** Writes the nginx root for `players` players of content `contentId`; returns the number of segments. */
export async function mirrorForNginx(o: {
  base: string;
  contentId: string;
  apiKey: string;
  players: number;
  root: string;
}): Promise<number> {
  const wanted = new Map<string, string>(); // a/00000.ts → a drm URL that serves it
  let segments = 0;
  fs.mkdirSync(path.join(o.root, 'p'), { recursive: true });
  for (let p = 0; p < o.players; p++) {
    const s = await text(`${o.base}/api/v1/stream/${o.contentId}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${o.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ viewerId: `player-${p}` }),
    });
    if (s.status !== 201) throw new Error(`POST /api/v1/stream/${o.contentId}: ${s.status} ${s.body}`);
    const session = JSON.parse(s.body) as { playlistUrl: string; binaryId: string };
    const playlistUrl = new URL(session.playlistUrl, o.base).href;
    const playlist = (await text(playlistUrl)).body;
    const urls = segmentUrls(playlist, playlistUrl);
    segments = urls.length;
    const lines = playlist.split('\n').map((line) => {
      const n = /\/segment\/(\d+)/.exec(line)?.[1];
      if (line.startsWith('#') || n === undefined) return line;
      const name = `${session.binaryId[Number(n) % 40] === '1' ? 'b' : 'a'}/${n.padStart(5, '0')}.ts`;
      if (!wanted.has(name)) wanted.set(name, new URL(line.trim(), playlistUrl).href);
      return `/${name}`;
    });
    fs.writeFileSync(path.join(o.root, 'p', `${p}.m3u8`), lines.join('\n'));
  }
  for (const [name, url] of wanted) {
    const res = await request(url);
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
    fs.mkdirSync(path.dirname(path.join(o.root, name)), { recursive: true });
    fs.writeFileSync(path.join(o.root, name), Buffer.from(await res.body.arrayBuffer()));
  }
  return segments;
}
