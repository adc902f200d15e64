// A closing server closes the connections of the answers it had open as they end, not when their
// clients let go of their keep-alive, and destroys an answer still open past the grace period
// (setup/close-connections.ts). Clients here keep idle connections a minute.

import { stalledConnection, within } from '@agentmesh/test-support/stalled-connection';
import Fastify, { type FastifyInstance } from 'fastify';
import t, { type Test } from 'tap';
import { Agent, fetch } from 'undici';
import { closeConnectionsOnEnd } from '../src/setup/close-connections.js';

const KEEP_ALIVE_MS = 60_000;

const portOf = (app: FastifyInstance) => (app.server.address() as { port: number }).port;

/** A server with a streaming route that ends on `preClose` (`/ends`) and one that never ends (`/hangs`). */
async function streamingServer(t: Test, graceMs?: number) {
  const app = Fastify();
  closeConnectionsOnEnd(app, graceMs);
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    // As the gateway's streams do: the last bytes go out a moment after the closing asked.
    for (const end of open) setTimeout(end, 50);
  });
  for (const path of ['/ends', '/hangs'])
    app.get(path, (_req, reply) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream', connection: 'keep-alive' });
      reply.raw.write(': open\n\n');
      if (path === '/ends') open.add(() => reply.raw.end('data: bye\n\n'));
    });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.close());
  const agent = new Agent({ keepAliveTimeout: KEEP_ALIVE_MS, keepAliveMaxTimeout: KEEP_ALIVE_MS });
  t.teardown(() => agent.destroy());
  const port = (app.server.address() as { port: number }).port;
  const read = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { dispatcher: agent });
    const reader = res.body!.getReader();
    await reader.read(); // open
    // Wrapped: an async function returning the promise would wait for it.
    const rest = (async () => {
      let text = '';
      for (let r = await reader.read(); !r.done; r = await reader.read()) text += Buffer.from(r.value);
      return text;
    })().catch((e: Error) => `error: ${e.message}`);
    return { rest };
  };
  return { app, read };
}

t.test('the connection of an answer ended while closing closes as it ends', async (t) => {
  const { app, read } = await streamingServer(t);
  const ended = (await Promise.all([read('/ends'), read('/ends')])).map((r) => r.rest);
  const took = await within(app.close(), 10_000);
  t.ok(took < 10_000, `closed in ${took} ms, not on the clients' ${KEEP_ALIVE_MS} ms keep-alive`);
  t.strictSame(await Promise.all(ended), ['data: bye\n\n', 'data: bye\n\n'], 'each got its last bytes');
});

t.test('an answer still open past the grace period is dropped', async (t) => {
  const { app, read } = await streamingServer(t, 300);
  const hung = (await read('/hangs')).rest;
  const took = await within(app.close(), 10_000);
  t.ok(took >= 250, `closed after the grace period (${took} ms)`);
  t.match(await hung, /^error: /, 'the client sees its answer cut');
});

// Node's close stops its checks of late headers (the 408 of framework-errors.ts) and waits for a
// connection with no request until its client lets go, however long.
t.test('a connection that has sent nothing does not hold the close', async (t) => {
  const { app, read } = await streamingServer(t);
  const { closed: dropped } = await stalledConnection(portOf(app));
  const ended = (await read('/ends')).rest;
  const took = await within(app.close(), 10_000);
  t.ok(took < 10_000, `closed in ${took} ms`);
  await within(dropped, 1000);
  t.pass('the silent connection was dropped');
  t.equal(await ended, 'data: bye\n\n', 'an answer open at the close still got its last bytes');
});

t.test('a connection part-way through its headers is dropped at the grace period', async (t) => {
  const { app } = await streamingServer(t, 300);
  const { closed: dropped } = await stalledConnection(portOf(app), 'GET /ends HT');
  const took = await within(app.close(), 10_000);
  t.ok(took >= 250, `closed after the grace period (${took} ms)`);
  await within(dropped, 1000);
  t.pass('the connection was dropped');
});
