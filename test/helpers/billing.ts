import { randomUUID } from 'node:crypto';
import type { ContentRow } from '../../src/db/repos/index.js';
import { grantLicense } from '../../src/domain/licenses.js';
import { adminToken } from './admin.js';
import type { TestApp } from './context.js';
import { addContent, registerOrg } from './fixtures.js';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read field by field in assertions
export type Json = Record<string, any>;

/** An organization with a stream to play: content licensed at the plan's price, or at `pricePerStream`. */
export async function billedOrg(t: TestApp, options: { pricePerStream?: number; name?: string } = {}) {
  const org = await registerOrg(t, { name: options.name ?? 'Acme Films' });
  const content: ContentRow = await addContent(t, { storagePath: `content/${randomUUID()}` });
  await grantLicense(t.ctx, org.organizationId, {
    contentId: content.id,
    contentType: 'video',
    pricePerStream: options.pricePerStream ?? 0,
  });
  await t.ctx.repos.organizations.update(org.organizationId, { rateLimitPerHour: 1_000_000 });
  return { ...org, content };
}

/** Starts a session of the content and returns its id. */
export async function stream(
  t: TestApp,
  apiKey: string,
  content: ContentRow,
  viewerId = `v-${randomUUID()}`,
): Promise<string> {
  const res = await t.request('POST', `/api/v1/stream/${content.id}`, { key: apiKey, body: { viewerId } });
  if (res.status !== 201) throw new Error(`stream failed: ${res.status} ${await res.text()}`);
  return ((await res.json()) as Json).sessionId as string;
}

/** A signed-in admin's request helper; it signs in again for each request, as tests move the clock by months. */
export async function asAdmin(t: TestApp) {
  return async (method: string, url: string, body?: unknown) =>
    t.request(method, url, { body, headers: { authorization: `Bearer ${await adminToken(t)}` } });
}

export const getJson = async (t: TestApp, url: string, key: string): Promise<Json> => {
  const res = await t.request('GET', url, { key });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Json;
};

/** Past the default grace window (1 h) after the month's end, when the period closer issues its invoices. */
export const PAST_GRACE_MS = 61 * 60_000;

/** The first instant of the month after the clock's (where the current period ends), plus plusMs. */
export function toNextMonth(t: TestApp, plusMs = PAST_GRACE_MS): void {
  const d = new Date(t.clock.now());
  t.clock.set(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) + plusMs);
}
