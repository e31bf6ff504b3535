import { Hono } from 'hono';
import type { Context } from '../../src/context.js';
import { registerOrganization, rotateApiKey } from '../../src/domain/organizations.js';
import { registrationBody, rotationBody, verifyBody } from '../../src/present/organizations.js';
import { reply } from '../reply.js';
import { readJson } from '../body.js';
import type { AppEnv } from '../env.js';
import { requireKey } from '../middleware/api-key.js';
import { limitPerClient } from '../middleware/open-limit.js';

export function authRoutes(ctx: Context) {
  const app = new Hono<AppEnv>();
  const shape = ctx.config.apiShape;

  app.post('/register', limitPerClient(ctx, 'register'), async (c) => {
    const body = await readJson(c, ctx.config.maxJsonBytes);
    const reg = await registerOrganization(ctx, body, shape === 'a' ? 'paid' : 'professional');
    return reply(c, registrationBody(reg), 201);
  });

  app.get('/verify', requireKey(ctx, 'any'), async (c) => {
    return reply(c, verifyBody(c.get('auth'), c.get('rate'), shape));
  });

  app.post('/rotate', requireKey(ctx, 'any'), async (c) => {
    const { apiKey } = await rotateApiKey(ctx, c.get('auth').key.id);
    return reply(c, rotationBody(apiKey));
  });

  return app;
}
