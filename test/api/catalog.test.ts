import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { addContent, license, registerOrg } from '../helpers/fixtures.js';
import { expectError } from '../helpers/expect-error.js';

type Item = Record<string, unknown> & { id: string };

const music = { type: 'music', title: 'Night Drive', resolution: null, isWatermarked: false, duration: 95_500 };

describe.each(DIALECTS)('catalog on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
  });
  afterAll(() => t.close());

  /** Every catalog entry the key can see (the largest page allowed). */
  async function list(key: string): Promise<Item[]> {
    const res = await t.request('GET', '/api/v1/catalog?limit=200', { key });
    expect(res.status).toBe(200);
    return ((await res.json()) as { content: Item[] }).content;
  }
  const ids = (items: Item[]) => items.map((i) => i.id);

  it('lists only ready content licensed to the organization by its content id', async () => {
    const org = await registerOrg(t);
    const licensed = await addContent(t, { title: 'Licensed' });
    const unlicensed = await addContent(t, { title: 'Unlicensed' });
    const processing = await addContent(t, { title: 'Still ingesting', status: 'processing' });
    await license(t, org.organizationId, licensed.id);
    await license(t, org.organizationId, processing.id);

    const items = await list(org.apiKey);
    expect(ids(items)).toEqual([licensed.id]);
    expect(ids(items)).not.toContain(unlicensed.id);
    expect(ids(items)).not.toContain(processing.id);
  });

  it('a wildcard video license lists every ready video and no music', async () => {
    const org = await registerOrg(t);
    const v1 = await addContent(t, { title: 'Video one' });
    const v2 = await addContent(t, { title: 'Video two' });
    const song = await addContent(t, music);
    const draft = await addContent(t, { title: 'Draft', status: 'processing' });
    await license(t, org.organizationId, '*', 'video');

    const items = await list(org.apiKey);
    expect(ids(items)).toEqual(expect.arrayContaining([v1.id, v2.id]));
    expect(ids(items)).not.toContain(song.id);
    expect(ids(items)).not.toContain(draft.id);
    expect(items.every((i) => i.type === 'video')).toBe(true);
  });

  it('a wildcard music license lists music and no video', async () => {
    const org = await registerOrg(t);
    const song = await addContent(t, music);
    const film = await addContent(t);
    await license(t, org.organizationId, '*', 'music');

    const items = await list(org.apiKey);
    expect(ids(items)).toContain(song.id);
    expect(ids(items)).not.toContain(film.id);
    expect(items.every((i) => i.type === 'music')).toBe(true);
  });

  it('lists an item covered by both its own license and the wildcard once', async () => {
    const org = await registerOrg(t);
    const film = await addContent(t);
    await license(t, org.organizationId, film.id);
    await license(t, org.organizationId, '*', 'video');

    const items = await list(org.apiKey);
    expect(ids(items).filter((id) => id === film.id)).toHaveLength(1);
    expect(new Set(ids(items)).size).toBe(items.length);
  });

  it('an organization without licenses sees an empty catalog', async () => {
    const org = await registerOrg(t);
    await addContent(t);
    const res = await t.request('GET', '/api/v1/catalog', { key: org.apiKey });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ content: [], page: 1, limit: 50 });
  });

  it('gives the summary fields: id, title, type, duration in seconds, thumbnail, and resolution and previewUrl for video only', async () => {
    const org = await registerOrg(t);
    const film = await addContent(t, { title: 'Summary film', duration: 60_000, resolution: '1080p' });
    const song = await addContent(t, { ...music, title: 'Summary song' });
    await license(t, org.organizationId, film.id);
    await license(t, org.organizationId, song.id, 'music');

    const items = await list(org.apiKey);
    const v = items.find((i) => i.id === film.id) as Item;
    const m = items.find((i) => i.id === song.id) as Item;
    expect(Object.keys(v).sort()).toEqual(['duration', 'id', 'previewUrl', 'resolution', 'thumbnail', 'title', 'type']);
    expect(v).toMatchObject({ id: film.id, title: 'Summary film', type: 'video', duration: 60, resolution: '1080p' });
    expect(URL.canParse(v.thumbnail as string)).toBe(true);
    expect(URL.canParse(v.previewUrl as string)).toBe(true);

    expect(Object.keys(m).sort()).toEqual(['duration', 'id', 'thumbnail', 'title', 'type']);
    expect(m).toMatchObject({ id: song.id, title: 'Summary song', type: 'music', duration: 95.5 });
    expect(URL.canParse(m.thumbnail as string)).toBe(true);
  });

  it('pages through the catalog with page and limit, oldest first', async () => {
    const org = await registerOrg(t);
    const made = [];
    for (const title of ['First', 'Second', 'Third']) {
      made.push(await addContent(t, { title }));
      t.clock.advance(1_000);
    }
    for (const c of made) await license(t, org.organizationId, c.id);

    const page = async (q: string) => {
      const res = await t.request('GET', `/api/v1/catalog?${q}`, { key: org.apiKey });
      expect(res.status).toBe(200);
      return (await res.json()) as { content: Item[]; page: number; limit: number };
    };
    const p1 = await page('page=1&limit=2');
    expect(p1).toMatchObject({ page: 1, limit: 2 });
    expect(p1.content.map((i) => i.title)).toEqual(['First', 'Second']);
    const p2 = await page('page=2&limit=2');
    expect(p2).toMatchObject({ page: 2, limit: 2 });
    expect(p2.content.map((i) => i.title)).toEqual(['Third']);
    expect((await page('page=3&limit=2')).content).toEqual([]);
    expect((await page('limit=200')).content).toHaveLength(3);
    expect((await page('limit=1')).content.map((i) => i.title)).toEqual(['First']);
    // The last page there can be is served (empty), however far past the end it lies.
    expect(await page('page=1000000&limit=200')).toMatchObject({ content: [], page: 1_000_000, limit: 200 });
  });

  it('refuses page and limit outside their bounds with 400 BAD_REQUEST', async () => {
    const org = await registerOrg(t);
    for (const q of [
      'limit=0',
      'limit=201',
      'limit=-1',
      'limit=abc',
      'limit=1.5',
      'limit=',
      'page=0',
      'page=-2',
      'page=x',
      'page=1.5',
      'page=1000001',
      'page=1e15',
      'page=1e21',
      'page=9007199254740993',
      'page=0x10',
      'page=1e3',
      'page=+5',
      'page=5.0',
      'limit=0x10',
      'limit=1e1',
    ]) {
      await expectError(await t.request('GET', `/api/v1/catalog?${q}`, { key: org.apiKey }), 400, 'BAD_REQUEST');
    }
  });

  it('detail gives the summary fields plus description, isWatermarked and hlsPlaylist', async () => {
    const org = await registerOrg(t);
    const film = await addContent(t, {
      title: 'Detail film',
      description: 'A long story',
      isWatermarked: true,
      resolution: '720p',
    });
    await license(t, org.organizationId, film.id);

    const res = await t.request('GET', `/api/v1/catalog/${film.id}`, { key: org.apiKey });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      id: film.id,
      title: 'Detail film',
      type: 'video',
      duration: 60,
      resolution: '720p',
      description: 'A long story',
      isWatermarked: true,
    });
    for (const field of ['thumbnail', 'previewUrl', 'hlsPlaylist']) {
      expect(URL.canParse(body[field]), field).toBe(true);
    }
    expect(body.hlsPlaylist).toContain(film.id);
  });

  it('music detail has no resolution or previewUrl and says whether it is watermarked', async () => {
    const org = await registerOrg(t);
    const song = await addContent(t, { ...music, description: null });
    await license(t, org.organizationId, '*', 'music');

    const res = await t.request('GET', `/api/v1/catalog/${song.id}`, { key: org.apiKey });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ id: song.id, type: 'music', duration: 95.5, isWatermarked: false, description: '' });
    expect(body).not.toHaveProperty('resolution');
    expect(body).not.toHaveProperty('previewUrl');
    expect(URL.canParse(body.hlsPlaylist)).toBe(true);
  });

  it('detail of an unknown id is 404 NOT_FOUND', async () => {
    const org = await registerOrg(t);
    await license(t, org.organizationId, '*', 'video');
    await expectError(await t.request('GET', `/api/v1/catalog/${randomUUID()}`, { key: org.apiKey }), 404, 'NOT_FOUND');
  });

  it('detail of a non-UUID id is 404 NOT_FOUND', async () => {
    const org = await registerOrg(t);
    await license(t, org.organizationId, '*', 'video');
    for (const id of ['not-a-uuid', '*', '123', encodeURIComponent("x' or '1'='1"), '%ZZ']) {
      await expectError(await t.request('GET', `/api/v1/catalog/${id}`, { key: org.apiKey }), 404, 'NOT_FOUND');
    }
  });

  it('detail of content that is not ready is 404 NOT_FOUND, even when licensed', async () => {
    const org = await registerOrg(t);
    const draft = await addContent(t, { status: 'processing' });
    await license(t, org.organizationId, draft.id);
    await expectError(await t.request('GET', `/api/v1/catalog/${draft.id}`, { key: org.apiKey }), 404, 'NOT_FOUND');
  });

  it('detail of content the organization is not licensed to is 403 LICENSE_REQUIRED', async () => {
    const org = await registerOrg(t);
    const film = await addContent(t);
    await expectError(
      await t.request('GET', `/api/v1/catalog/${film.id}`, { key: org.apiKey }),
      403,
      'LICENSE_REQUIRED',
    );
  });

  it('a wildcard video license does not open music detail (403 LICENSE_REQUIRED)', async () => {
    const org = await registerOrg(t);
    const song = await addContent(t, music);
    await license(t, org.organizationId, '*', 'video');
    await expectError(
      await t.request('GET', `/api/v1/catalog/${song.id}`, { key: org.apiKey }),
      403,
      'LICENSE_REQUIRED',
    );
  });

  it("another organization's license does not leak into the catalog or the detail", async () => {
    const other = await registerOrg(t, { name: 'Other Org' });
    const mine = await registerOrg(t, { name: 'My Org' });
    const theirs = await addContent(t, { title: 'Theirs only' });
    const theirSong = await addContent(t, music);
    await license(t, other.organizationId, theirs.id);
    await license(t, other.organizationId, '*', 'music');

    expect(ids(await list(other.apiKey))).toEqual(expect.arrayContaining([theirs.id, theirSong.id]));
    const items = await list(mine.apiKey);
    expect(ids(items)).not.toContain(theirs.id);
    expect(ids(items)).not.toContain(theirSong.id);
    expect(items).toEqual([]);
    await expectError(
      await t.request('GET', `/api/v1/catalog/${theirs.id}`, { key: mine.apiKey }),
      403,
      'LICENSE_REQUIRED',
    );
    await expectError(
      await t.request('GET', `/api/v1/catalog/${theirSong.id}`, { key: mine.apiKey }),
      403,
      'LICENSE_REQUIRED',
    );
  });

  it('needs a key with the catalog scope', async () => {
    const film = await addContent(t);
    const streamOnly = await registerOrg(t, { scopes: ['stream'] });
    await license(t, streamOnly.organizationId, film.id);
    await expectError(await t.request('GET', '/api/v1/catalog', { key: streamOnly.apiKey }), 403, 'INSUFFICIENT_SCOPE');
    await expectError(
      await t.request('GET', `/api/v1/catalog/${film.id}`, { key: streamOnly.apiKey }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    await expectError(await t.request('GET', '/api/v1/catalog'), 401, 'INVALID_API_KEY');
  });

  it('requests answered together share a page only where it is the same page at the same address', async () => {
    const org = await registerOrg(t);
    const films = [await addContent(t, { title: 'Shared one' }), await addContent(t, { title: 'Shared two' })];
    for (const film of films) await license(t, org.organizationId, film.id);
    const at = (host: string, query: string) =>
      t.app.request(`http://${host}/api/v1/catalog${query}`, { headers: { authorization: `Bearer ${org.apiKey}` } });
    // Sent in one go, so that they are answered in the same turn from one query's rows.
    const answers = await Promise.all([
      at('a.example', '?limit=1'),
      at('b.example', '?limit=1'),
      at('a.example', '?limit=2'),
      at('a.example', '?limit=1'),
    ]);
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as Array<{ content: Item[]; limit: number }>;
    expect(bodies.map((b) => [b.limit, b.content.length])).toEqual([
      [1, 1],
      [1, 1],
      [2, 2],
      [1, 1],
    ]);
    expect(bodies[0]?.content[0]?.thumbnail).toMatch(/^http:\/\/a\.example\/api\/v1\/catalog\//);
    expect(bodies[1]?.content[0]?.thumbnail).toMatch(/^http:\/\/b\.example\/api\/v1\/catalog\//);
    expect(bodies[3]).toEqual(bodies[0]);
  });
});
