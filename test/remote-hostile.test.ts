// Remote A2A agents that misbehave (issue 24, items 2 and 8), served by hostile HTTP servers in
// this test: one answers a message with its headers and then a byte at a time, one never answers
// at all, one publishes a card naming its interface on another origin (or redirects there). A slow
// or silent peer never keeps an invocation past its deadline nor holds a runner slot past the
// activation's watch; the configured secret headers never reach an origin the config does not allow.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { type FakeScript, toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

type Seen = { url: string; authorization: string | undefined; closed: boolean };

/** An HTTP server answering with `handle`, recording each request; everything stops at teardown. */
async function hostile(
  handle: (req: http.IncomingMessage, res: http.ServerResponse, origin: string) => void,
) {
  const seen: Seen[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let origin = '';
  const s = http.createServer((req, res) => {
    const entry: Seen = { url: req.url ?? '', authorization: req.headers.authorization, closed: false };
    seen.push(entry);
    res.on('close', () => {
      entry.closed = true;
    });
    req.resume();
    handle(req, res, origin);
  });
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  t.teardown(
    () =>
      new Promise<void>((r) => {
        for (const timer of timers) clearInterval(timer);
        s.closeAllConnections();
        s.close(() => r());
      }),
  );
  return { origin, seen, timers };
}

/** An A2A v1.0 agent card whose JSON-RPC interface is `url`. */
const card = (url: string) =>
  JSON.stringify({
    name: 'remote',
    description: 'A remote agent.',
    supportedInterfaces: [{ url, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
    version: '1.0.0',
    capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: false },
    defaultInputModes: ['text/plain'],
    defaultOutputModes: ['text/plain'],
  });

// Records what reaches it: the origin a card must not aim runners at.
const elsewhere = await hostile((_req, res) =>
  res
    .writeHead(200, { 'content-type': 'application/json' })
    .end('{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no such method here"}}'),
);

const peer = await hostile((req, res, origin) => {
  const path = (req.url ?? '').split('?')[0];
  if (req.method === 'GET' && path === '/slow/card') return res.end(card(`${origin}/slow/rpc`));
  if (req.method === 'GET' && path === '/silent/card') return res.end(card(`${origin}/silent/rpc`));
  if (req.method === 'GET' && path === '/evil/card') return res.end(card(`${elsewhere.origin}/rpc`));
  if (req.method === 'GET' && path === '/hop/card')
    return res.writeHead(302, { location: `${elsewhere.origin}/card` }).end();
  if (path === '/slow/rpc') {
    // Headers, then a byte a second: the body is never done.
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{');
    const timer = setInterval(() => res.write(' '), 1000);
    peer.timers.add(timer);
    res.on('close', () => clearInterval(timer));
    return;
  }
  if (path === '/silent/rpc') return; // no headers, ever
  res.writeHead(404).end();
});

const script: FakeScript = (r) => {
  if (r.agent === 'echo') return { final: 'echoed' };
  const target = r.messages.find((m) => m.role === 'user')?.content ?? '';
  if (turnOf(r) === 0) return { calls: [{ name: `_subagent_${target}`, args: { prompt: 'hi' } }] };
  return { final: `boss got: ${toolMessagesOf(r)[0]?.content ?? ''}` };
};

const remote = (name: string, extra = '') => `
  ${name}:
    description: A remote agent.
    remote: {a2a: '${peer.origin}/${name === 'allowed' ? 'evil' : name}/card', headers: {authorization: 'Bearer s3cret'}${extra}}`;

// The runner watches a remote task for 2.5 s before it parks the child and frees its slot (5 s in
// production): longer than the 2 s deadlines below, so those end at the deadline, mid-request.
const mesh = await startMesh(t, {
  script,
  concurrency: 2,
  limits: { remoteWatchMs: 2500 },
  agentsYaml: `
  boss: {instructions: "@agent boss", subagents: [slow, silent, evil, hop, allowed]}
  echo: {instructions: "@agent echo"}
${remote('slow')}
${remote('silent')}
${remote('evil')}
${remote('hop')}
${remote('allowed', `, allowedOrigins: ['${elsewhere.origin}']`)}
`,
});

const rpcs = (path: string) => peer.seen.filter((s) => s.url === path);

// The two peers at once (the runner's two slots hold one child each): each counts its own requests.
t.test('slow and silent remote agents', { jobs: 2 }, async (t) => {
  for (const name of ['slow', 'silent']) {
    t.test(`a ${name} remote agent ends at the deadline, and its request is closed`, async (t) => {
      const started = await mesh.invoke('boss', { prompt: name }, 'wait=0&timeout=2');
      const view = await mesh.waitForStatus(started.json.id, 'failed', 30_000);
      t.equal(view.error.code, 'deadline_exceeded');
      const child = (await mesh.get(`/invocations/${view.calls.find((c: any) => c.childId).childId}`)).json;
      t.equal(child.status, 'failed');
      t.equal(child.error.code, 'deadline_exceeded');
      t.ok(rpcs(`/${name}/rpc`).length > 0, 'the message went out');
      await waitUntil(
        async () => rpcs(`/${name}/rpc`).every((s) => s.closed),
        10_000,
        () => `every request to /${name}/rpc to be closed by the runner`,
      );
    });
  }
});

t.test('slow remote peers never starve the runner: its slots serve other agents', async (t) => {
  // Four delegations to the slow peer on a runner of two slots, with a long deadline.
  const roots = await Promise.all(
    [1, 2, 3, 4].map(
      async () => (await mesh.invoke('boss', { prompt: 'slow' }, 'wait=0&timeout=120')).json.id,
    ),
  );
  await waitUntil(
    async () => rpcs('/slow/rpc').filter((s) => !s.closed).length >= 2,
    30_000,
    () => 'two slow requests in flight',
  );
  const echo = await mesh.invoke('echo', { prompt: 'hi' }, 'wait=60');
  t.equal(echo.json.status, 'succeeded', 'another agent runs while the slow peer trickles');
  for (const id of roots) await mesh.request('DELETE', `/invocations/${id}`);
  for (const id of roots) await mesh.waitForStatus(id, 'cancelled', 30_000);
});

t.test('a card naming its interface on another origin is refused; no secret leaves', async (t) => {
  const before = elsewhere.seen.length;
  const view = (await mesh.invoke('boss', { prompt: 'evil' }, 'wait=30')).json;
  t.equal(view.status, 'succeeded');
  t.match(
    view.output,
    /^boss got: Sub-agent _subagent_evil execute failed: .*not the card's origin; allow it in remote.allowedOrigins/,
  );
  t.equal(elsewhere.seen.length, before, 'the other origin got no request');
  const hop = (await mesh.invoke('boss', { prompt: 'hop' }, 'wait=30')).json;
  t.match(hop.output, /^boss got: Sub-agent _subagent_hop execute failed: .*not the agent card's origin/);
  t.equal(elsewhere.seen.length, before, 'nor after a redirect');
});

t.test('an origin the config allows gets the request and the configured headers', async (t) => {
  const view = (await mesh.invoke('boss', { prompt: 'allowed' }, 'wait=30')).json;
  t.equal(view.status, 'succeeded');
  t.match(view.output, /no such method here/, "the remote's own answer came back");
  const got = elsewhere.seen.filter((s) => s.url === '/rpc');
  t.ok(got.length > 0);
  t.equal(got[0]?.authorization, 'Bearer s3cret');
});
