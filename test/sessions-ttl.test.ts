// Sessions (docs/guides/sessions.md): a session lives MESH_SESSION_TTL_SECONDS after its last use. With a TTL of
// 2 s (MESH_SESSION_TTL_SECONDS takes whole seconds, 1 at least): the keys' TTL runs down, a new turn
// pushes it back up, and an unused session goes.
import t from 'tap';
import type { SeenRequest } from './support/fake-model.js';
import { addRunner, listenGateway, startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

const TTL_SECONDS = 2;
const chat = '  chat: {description: Chats., instructions: "@agent chat"}\n';
const lastUser = (r: SeenRequest) => r.messages.filter((m) => m.role === 'user').at(-1)!.content!;
const roles = (r: SeenRequest) => r.messages.map((m) => `${m.role}:${m.content}`);

t.test('the session TTL slides with each turn; an unused session expires', async (t) => {
  // The mesh's own runner and gateway keep the default TTL: this test brings its own, both with
  // the small one (MESH_SESSION_TTL_SECONDS maps to their sessionTtlSeconds).
  const mesh = await startMesh(t, {
    agentsYaml: chat,
    runners: 0,
    script: (r) => ({ final: `answer to ${lastUser(r)}` }),
  });
  await addRunner(t, mesh, { sessionTtlSeconds: TTL_SECONDS });
  const { gateway } = await listenGateway(t, mesh, { sessionTtlSeconds: TTL_SECONDS });
  const request = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const res = await gateway.app.inject({ method, url, ...(payload ? { payload } : {}) });
    return { status: res.statusCode, json: JSON.parse(res.body) };
  };
  const turn = (prompt: string) => request('POST', '/agents/chat/invoke?wait=30&session=short', { prompt });
  const keys = ['meta', 'invocations', 'messages'].map((k) => `mesh:{session:short}:${k}`);
  const ttls = () => Promise.all(keys.map((k) => mesh.client.pttl(k)));
  // The runner advances the session (and slides its TTL) just after the finish the answer reports.
  const advanced = () =>
    waitUntil(
      async () => (await mesh.client.hget(keys[0]!, 'current')) === '',
      10_000,
      () => 'the advance',
    );

  const first = await turn('one');
  t.equal(first.status, 200, 'the first turn runs');
  await advanced();
  const fresh = await ttls();
  t.ok(
    fresh.every((ms) => ms > 0 && ms <= TTL_SECONDS * 1000),
    `every key of the session expires within the configured TTL (${fresh} ms)`,
  );

  // Unused, the TTL runs down (by a quarter: the rest, 1.5 s, is the next turn's margin to find
  // the session still there)…
  const before = await waitUntil(
    async () => {
      const now = await ttls();
      return now.every((ms) => ms > 0 && ms < (TTL_SECONDS * 1000 * 3) / 4) ? now : undefined;
    },
    TTL_SECONDS * 1000,
    () => 'the TTL to run down by a quarter',
  );
  // …and a new turn pushes it back up: the session is still there, with its history.
  const second = await turn('two');
  t.equal(second.status, 200, 'the second turn runs');
  t.same(roles(mesh.model.requests.at(-1)!), [
    'system:@agent chat',
    'user:one',
    'assistant:answer to one',
    'user:two',
  ]);
  await advanced();
  const after = await ttls();
  for (const [i, key] of keys.entries()) {
    t.ok(
      after[i]! > before[i]! && after[i]! <= TTL_SECONDS * 1000,
      `${key}: the turn slid its TTL back up (${before[i]} → ${after[i]} ms)`,
    );
  }

  // Left unused, the session expires: every key goes, GET answers 404, and the id starts afresh.
  await waitUntil(
    async () => (await mesh.client.exists(...keys)) === 0,
    TTL_SECONDS * 1000 * 3,
    () => 'the session to expire',
  );
  const gone = await request('GET', '/sessions/short');
  t.equal(gone.status, 404);
  t.equal(gone.json.error.code, 'session_not_found');
  const again = await turn('three');
  t.equal(again.status, 200);
  t.same(roles(mesh.model.requests.at(-1)!), ['system:@agent chat', 'user:three'], 'no history is left');
  t.same((await request('GET', '/sessions/short')).json.invocations, [again.json.id]);
});
