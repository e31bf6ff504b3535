import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asAdmin, type Json, stream } from '../helpers/billing.js';
import { DIALECTS, makeTestApp, type TestApp } from '../helpers/context.js';
import { expectError } from '../helpers/expect-error.js';
import { addContent, license, registerOrg } from '../helpers/fixtures.js';

// The operator lists, shows and deletes content. A delete is refused while
// sessions play the item (unless forced), removes files and rows in one step, and keeps the row as
// a tombstone while sessions or cases name it.

describe.each(DIALECTS)('content management on %s', (dialect) => {
  let t: TestApp;
  let admin: Awaited<ReturnType<typeof asAdmin>>;
  beforeAll(async () => {
    t = await makeTestApp(dialect);
    admin = await asAdmin(t);
  });
  afterAll(() => t.close());

  /** An item with files on disk, as ingest leaves it. */
  async function itemWithFiles(title: string) {
    const storagePath = `${title.toLowerCase()}-${Date.now()}`;
    const dir = path.join(t.ctx.storage.root, storagePath, 'plain');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, '00000.ts'), Buffer.alloc(188));
    return { item: await addContent(t, { title, storagePath }), dir: path.join(t.ctx.storage.root, storagePath) };
  }

  it('lists every item and shows one with what names it; unknown ids are 404 and the operator alone may ask', async () => {
    const { item } = await itemWithFiles('Listed');
    const list = (await (await admin('GET', '/api/v1/admin/content?limit=200')).json()) as Json;
    expect(list.content.map((c: Json) => c.id)).toContain(item.id);
    expect(list.total).toBeGreaterThanOrEqual(1);
    const shown = (await (await admin('GET', `/api/v1/admin/content/${item.id}`)).json()) as Json;
    expect(shown).toMatchObject({
      id: item.id,
      title: 'Listed',
      status: 'ready',
      references: { liveSessions: 0, sessions: 0, licenses: 0, cases: 0 },
    });
    await expectError(
      await admin('GET', '/api/v1/admin/content/00000000-0000-4000-8000-000000000000'),
      404,
      'NOT_FOUND',
    );
    await expectError(await t.request('GET', '/api/v1/admin/content'), 401, 'INVALID_ADMIN_TOKEN');
    await expectError(await admin('GET', '/api/v1/admin/content?limit=201'), 400, 'BAD_REQUEST');
  });

  it('removes an item nothing names: files and row', async () => {
    const { item, dir } = await itemWithFiles('Unused');
    const res = (await (await admin('DELETE', `/api/v1/admin/content/${item.id}`)).json()) as Json;
    expect(res).toMatchObject({ success: true, outcome: 'removed', endedSessions: 0 });
    expect(fs.existsSync(dir)).toBe(false);
    expect(await t.ctx.repos.content.find(item.id)).toBeUndefined();
    await expectError(await admin('DELETE', `/api/v1/admin/content/${item.id}`), 404, 'NOT_FOUND');
  });

  it('refuses while a session plays it; forced, it ends the session, drops the license, removes the files and keeps a tombstone', async () => {
    const { item, dir } = await itemWithFiles('Playing');
    const org = await registerOrg(t);
    await license(t, org.organizationId, item.id);
    const sessionId = await stream(t, org.apiKey, item);
    await expectError(await admin('DELETE', `/api/v1/admin/content/${item.id}`), 409, 'CONFLICT');
    expect(fs.existsSync(dir)).toBe(true);
    await expectError(await admin('DELETE', `/api/v1/admin/content/${item.id}?force=maybe`), 400, 'BAD_REQUEST');
    const res = (await (await admin('DELETE', `/api/v1/admin/content/${item.id}?force=true`)).json()) as Json;
    expect(res).toMatchObject({ outcome: 'tombstone', endedSessions: 1 });
    expect(fs.existsSync(dir)).toBe(false);
    expect(await t.ctx.repos.content.find(item.id)).toMatchObject({
      status: 'deleted',
      storagePath: null,
      contentKey: null,
    });
    expect((await t.ctx.repos.sessions.find(sessionId))?.isActive).toBe(false);
    const catalog = (await (await t.request('GET', '/api/v1/catalog', { key: org.apiKey })).json()) as Json;
    expect(catalog.content.map((c: Json) => c.id)).not.toContain(item.id);
    expect(((await (await admin('GET', `/api/v1/admin/content/${item.id}`)).json()) as Json).references).toMatchObject({
      licenses: 0,
      sessions: 1,
      liveSessions: 0,
    });
  });
});
