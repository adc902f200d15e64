// remoteFetch against hostile HTTP servers (issue 24, items 2 and 8): every request ends at its
// timeout whether its headers or its bytes are late, and requests go to allowed origins only.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import t from 'tap';
import { RemoteError } from '../src/loop/remote/remote-error.js';
import { remoteFetch } from '../src/loop/remote/remote-fetch.js';

/** A server whose handler is `handle`; records each request's path, headers and whether it closed. */
async function server(t: Test, handle: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const seen: { url: string; headers: http.IncomingHttpHeaders; closed: boolean }[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const s = http.createServer((req, res) => {
    const entry = { url: req.url ?? '', headers: req.headers, closed: false };
    seen.push(entry);
    res.on('close', () => {
      entry.closed = true;
    });
    handle(req, res);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  t.teardown(
    () =>
      new Promise<void>((r) => {
        for (const timer of timers) clearInterval(timer);
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  const origin = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  return { origin, seen, timers };
}

const settled = async (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => 'resolved',
    (e: unknown) => e,
  );

t.test('a response whose bytes trickle in ends at the timeout, and the connection closes', async (t) => {
  const h = await server(t, (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const timer = setInterval(() => res.write(' '), 100);
    h.timers.add(timer);
  });
  const f = remoteFetch({ headers: {}, origins: new Set([h.origin]), timeoutMs: 400 });
  const res = await f(`${h.origin}/rpc`, { method: 'POST', body: '{}' });
  const error = (await settled(res.text())) as Error;
  t.equal(error.name, 'TimeoutError', 'reading the body fails with a timeout');
  await new Promise((r) => setTimeout(r, 200));
  t.equal(h.seen[0]?.closed, true, 'the server sees the request end');
});

t.test('a server that never sends headers is bounded by the timeout too', async (t) => {
  const h = await server(t, () => undefined);
  const f = remoteFetch({ headers: {}, origins: new Set([h.origin]), timeoutMs: 300 });
  const error = (await settled(f(`${h.origin}/rpc`, { method: 'POST', body: '{}' }))) as Error;
  t.equal(error.name, 'TimeoutError');
  await new Promise((r) => setTimeout(r, 200));
  t.equal(h.seen[0]?.closed, true);
});

t.test("the caller's signal ends a request earlier than the timeout", async (t) => {
  const h = await server(t, () => undefined);
  const f = remoteFetch({ headers: {}, origins: new Set([h.origin]), timeoutMs: 60_000 });
  const error = (await settled(f(`${h.origin}/rpc`, { signal: AbortSignal.timeout(200) }))) as Error;
  t.equal(error.name, 'TimeoutError');
});

t.test('configured headers go to allowed origins; another origin gets no request at all', async (t) => {
  const card = await server(t, (_req, res) => res.end('{}'));
  const other = await server(t, (_req, res) => res.end('{}'));
  const f = remoteFetch({ headers: { authorization: 'Bearer s3cret' }, origins: new Set([card.origin]) });
  const res = await f(`${card.origin}/card`);
  t.equal(res.status, 200);
  // Read to its end: an unread body keeps its request's timeout pending (30 s by default).
  await res.text();
  t.equal(card.seen[0]?.headers.authorization, 'Bearer s3cret');
  const refused = await settled(f(`${other.origin}/rpc`, { method: 'POST', body: '{}' }));
  t.ok(refused instanceof RemoteError && !refused.transient, 'refused for good');
  t.match((refused as Error).message, /not the agent card's origin, nor one of remote.allowedOrigins/);
  t.equal(other.seen.length, 0, 'the other origin saw nothing');
});

t.test('a redirect is followed only to an allowed origin', async (t) => {
  const target = await server(t, (_req, res) => res.end('{"ok":true}'));
  const h = await server(t, (req, res) => {
    res.writeHead(302, { location: req.url === '/away' ? `${target.origin}/card` : '/card2' }).end();
  });
  const f = remoteFetch({ headers: { authorization: 'Bearer s3cret' }, origins: new Set([h.origin]) });
  const refused = await settled(f(`${h.origin}/away`));
  t.ok(refused instanceof RemoteError, 'a redirect to another origin is refused');
  t.equal(target.seen.length, 0);
  const allowed = remoteFetch({
    headers: { authorization: 'Bearer s3cret' },
    origins: new Set([h.origin, target.origin]),
  });
  const res = await allowed(`${h.origin}/away`);
  t.same(await res.json(), { ok: true });
  t.equal(target.seen[0]?.headers.authorization, 'Bearer s3cret', 'an allowed origin gets the headers');
  const loop = await settled(allowed(`${h.origin}/loop`));
  t.match((loop as Error).message, /more than 5 redirects/);
});
