import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { ROOT } from './serve-process.js';

// hls.js, the player most sites embed, on a page of its own origin (as on an organization's
// site), in Debian's headless Chromium: shared by the end-to-end tests that play in a browser.

const CHROMIUM = '/usr/bin/chromium';

const PLAYER = `<!doctype html><meta charset="utf-8"><title>player</title>
<video id="v" muted autoplay playsinline></video>
<script src="/hls.min.js"></script>
<script>
  window.playerErrors = [];
  window.play = (url) => {
    const video = document.getElementById('v');
    const hls = new Hls();
    hls.on(Hls.Events.ERROR, (_e, d) => window.playerErrors.push(d.type + ':' + d.details + (d.fatal ? ' (fatal)' : '')));
    hls.loadSource(url);
    hls.attachMedia(video);
    video.play().catch((e) => window.playerErrors.push('play: ' + e.message));
  };
</script>`;

export interface PlayerSite {
  /** the page's URL; its origin is the site's */
  url: string;
  origin: string;
  browser: BrowserContext;
  close(): Promise<void>;
}

/** The organization's site (another origin than the API's) and a headless Chromium to open it. */
export async function startPlayerSite(profileDir: string): Promise<PlayerSite> {
  const hlsJs = fs.readFileSync(path.join(ROOT, 'node_modules/hls.js/dist/hls.min.js'));
  const page = http.createServer((req, res) => {
    if (req.url === '/hls.min.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(hlsJs);
    else res.writeHead(200, { 'content-type': 'text/html' }).end(PLAYER);
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`;
  const browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--autoplay-policy=no-user-gesture-required',
    ],
  });
  return {
    url: `${origin}/`,
    origin,
    browser,
    async close() {
      await browser.close();
      page.close();
    },
  };
}

export interface Playback {
  tab: Page;
  currentTime(): Promise<number>;
  ended(): Promise<boolean>;
  /** frames the video element decoded */
  frames(): Promise<number>;
  /** hls.js's errors, `type:details`, with ` (fatal)` on those it gave up on */
  errors(): Promise<string[]>;
}

/** Opens the player page in a new tab and starts hls.js on a playlist URL. */
export async function playIn(site: PlayerSite, playlistUrl: string, onTab?: (tab: Page) => void): Promise<Playback> {
  const tab = await site.browser.newPage();
  onTab?.(tab);
  await tab.goto(site.url);
  await tab.evaluate((url) => (window as unknown as { play: (u: string) => void }).play(url), playlistUrl);
  return {
    tab,
    currentTime: () => tab.evaluate(() => (document.getElementById('v') as HTMLVideoElement).currentTime),
    ended: () => tab.evaluate(() => (document.getElementById('v') as HTMLVideoElement).ended),
    frames: () =>
      tab.evaluate(() => (document.getElementById('v') as HTMLVideoElement).getVideoPlaybackQuality().totalVideoFrames),
    errors: () => tab.evaluate(() => (window as unknown as { playerErrors: string[] }).playerErrors),
  };
}
