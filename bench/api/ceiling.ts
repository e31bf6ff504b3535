import { serve } from '@hono/node-server';
import { Hono } from 'hono';

// The ceiling: a bare hono app on @hono/node-server answering a constant JSON, so that the
// benchmark can say how much of what the stack can do at all the real endpoints keep.
const body = {
  organization: { id: '00000000-0000-0000-0000-000000000000', name: 'Ceiling', isActive: true },
  ok: true,
};
const app = new Hono();
app.get('/', (c) => c.json(body));

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info) => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${info.port}`, port: info.port })}\n`);
});
const stop = () => server.close();
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
