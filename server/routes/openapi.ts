import { Hono } from 'hono';
import { etag } from 'hono/etag';
import type { Context } from '../../src/context.js';
import type { AppEnv } from '../env.js';
import { openApiDocument } from '../openapi/document.js';
import { packageVersion } from '../../src/version.js';

/**
 * GET /openapi.json, beside /health and /metrics: the document describes the process (every API
 * version it serves), not one version. Open and cacheable: it changes only with the build and
 * the deployment's --api-shape, and doc viewers on other origins may read it.
 */
export function openApiRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();
  let body: string | undefined;
  app.use('/openapi.json', etag());
  app.get('/openapi.json', (c) => {
    body ??= JSON.stringify(
      openApiDocument({ shape: ctx.config.apiShape, version: packageVersion(), publicUrl: ctx.config.publicUrl }),
    );
    return c.body(body, 200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'public, max-age=300',
      'Access-Control-Allow-Origin': '*',
    });
  });
  return app;
}
