import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { createApp } from '../../server/app.js';
import { ForensicsQueue } from '../../src/domain/forensics/queue.js';
import { TrafficMeter } from '../../src/domain/operations/traffic-meter.js';
import { ManualClock } from '../../src/clock.js';
import { type Config, resolveConfig } from '../../src/config.js';
import type { Context } from '../../src/context.js';
import { createContext } from '../../src/create-context.js';
import { createLogger } from '../../src/log.js';

export const DIALECTS = ['sqlite', 'postgres'] as const;
export type DialectName = (typeof DIALECTS)[number];

/** A fresh empty database of the dialect: a file in a temp dir, or a new database in the test cluster. */
export async function freshDatabaseUrl(dialect: DialectName, dir: string): Promise<string> {
  if (dialect === 'sqlite') return `sqlite:${path.join(dir, 'drm.db')}`;
  const admin = inject('pgUrl');
  const name = `t_${Math.random().toString(36).slice(2, 12)}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  return admin.replace(/\/postgres$/, `/${name}`);
}

export interface TestApp {
  ctx: Context;
  clock: ManualClock;
  dir: string;
  app: ReturnType<typeof createApp>;
  /** the app's forensics queue, without its background loop: `drain()` runs queued cases */
  forensics: ForensicsQueue;
  /** counts the app's traffic into the database like drm serve's (flush() writes it) */
  traffic: TrafficMeter;
  /** Sends a request to the app (no socket); body objects are sent as JSON. */
  request(
    method: string,
    url: string,
    init?: { key?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Response>;
  close(): Promise<void>;
}

export async function makeTestApp(
  dialect: DialectName,
  options: { config?: Partial<Config>; fetch?: typeof fetch } = {},
): Promise<TestApp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drm-test-'));
  const db = await freshDatabaseUrl(dialect, dir);
  const config = { ...resolveConfig({ dataDir: dir, db, logLevel: 'silent' }, {}), ...options.config };
  const clock = new ManualClock();
  const ctx = await createContext(config, { clock, log: createLogger('silent'), fetch: options.fetch });
  const forensics = new ForensicsQueue(ctx);
  const traffic = new TrafficMeter(ctx, 'test-app');
  const app = createApp(ctx, { forensics, traffic });
  return {
    ctx,
    clock,
    dir,
    app,
    forensics,
    traffic,
    request(method, url, init = {}) {
      const headers: Record<string, string> = { ...init.headers };
      if (init.key) headers.authorization = `Bearer ${init.key}`;
      let body: string | undefined;
      if (init.body !== undefined) {
        body = typeof init.body === 'string' ? init.body : JSON.stringify(init.body);
        headers['content-type'] ??= 'application/json';
      }
      return Promise.resolve(app.request(url, { method, headers, body }));
    },
    async close() {
      await forensics.stop();
      await ctx.db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
