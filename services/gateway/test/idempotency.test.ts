// Idempotency-Key on POST /agents/{name}/invoke (docs/reference/rest-api.md): same key, same agent,
// same API key → the same invocation and one job, also under concurrent duplicates; another body →
// 422. On a gateway without runners, so every invocation stays queued; that a duplicate waits for
// the one run, and the model runs once, is test/gateway-invocations.test.ts.
import { createHash } from 'node:crypto';
import { canonicalJson } from '@agentmesh/shared';
import t from 'tap';
import { startGateway } from './support/gateway.js';

const alpha = { authorization: 'Bearer alpha-key' };
const beta = { authorization: 'Bearer beta-key' };
const keyed = (key: string, auth = alpha) => ({ ...auth, 'idempotency-key': key });

const mesh = await startGateway(t, {
  gateway: { apiKeys: 'alpha-key,beta-key' },
  headers: alpha,
  agentsYaml: `
  echo:
    instructions: "@agent echo"
  twin:
    instructions: "@agent twin"
  slow:
    instructions: "@agent slow"
  pair:
    instructions: "@agent pair"
    input: {type: object, properties: {a: {type: integer}, b: {type: integer}}, required: [a, b]}
`,
});

t.test('the same Idempotency-Key twice answers the same invocation, and queues one job', async (t) => {
  const first = await mesh.invoke('echo', { prompt: 'hi' }, 'wait=0', keyed('order-1'));
  t.equal(first.status, 202);
  const second = await mesh.invoke('echo', { prompt: 'hi' }, 'wait=0', keyed('order-1'));
  t.equal(second.status, 202);
  t.equal(second.json.id, first.json.id, 'the same invocation');
  t.equal(second.headers.location, `/invocations/${first.json.id}`);
  t.equal(await mesh.queued('echo'), 1, 'one job');
  const pairA = await mesh.invoke('pair', { a: 1, b: 2 }, 'wait=0', keyed('pair-1'));
  const pairB = await mesh.invoke('pair', { b: 2, a: 1 }, 'wait=0', keyed('pair-1'));
  t.equal(pairB.json.id, pairA.json.id, 'key order in the body does not matter');
  t.equal(await mesh.queued('pair'), 1);
});

t.test('10 concurrent duplicates start one invocation and one job', async (t) => {
  const before = await mesh.client.zcard(mesh.keys.recent());
  const all = await Promise.all(
    Array.from({ length: 10 }, () => mesh.invoke('slow', { prompt: 'once' }, 'wait=0', keyed('burst'))),
  );
  t.strictSame(
    all.map((r) => r.status),
    Array(10).fill(202),
  );
  t.equal(new Set(all.map((r) => r.json.id)).size, 1, 'one invocation id');
  t.equal(await mesh.queued('slow'), 1, 'one job');
  t.equal(await mesh.client.zcard(mesh.keys.recent()), before + 1, 'one invocation listed');
});

t.test('the same key with another body answers 422 idempotency_key_reused', async (t) => {
  t.equal((await mesh.invoke('echo', { prompt: 'a' }, 'wait=0', keyed('reuse'))).status, 202);
  const res = await mesh.invoke('echo', { prompt: 'b' }, 'wait=0', keyed('reuse'));
  t.equal(res.status, 422);
  t.strictSame(res.json, {
    error: {
      code: 'idempotency_key_reused',
      message: 'This Idempotency-Key was used with a different request.',
    },
  });
});

t.test('the same key for another agent, or with another API key, starts another invocation', async (t) => {
  const echo = await mesh.invoke('echo', { prompt: 'x' }, 'wait=0', keyed('shared'));
  const twin = await mesh.invoke('twin', { prompt: 'x' }, 'wait=0', keyed('shared'));
  const other = await mesh.invoke('echo', { prompt: 'x' }, 'wait=0', keyed('shared', beta));
  t.equal(new Set([echo.json.id, twin.json.id, other.json.id]).size, 3);
  t.equal(
    (await mesh.invoke('echo', { prompt: 'x' }, 'wait=0', keyed('shared', beta))).json.id,
    other.json.id,
    'each API key has its own keys',
  );
  const free = await mesh.invoke('echo', { prompt: 'x' }, 'wait=0');
  t.not(free.json.id, echo.json.id, 'without a key every request starts one');
});

t.test('a malformed Idempotency-Key answers 400 invalid_input at /Idempotency-Key', async (t) => {
  for (const key of ['k'.repeat(256), 'caf\u00e9', 'a\tb']) {
    const res = await mesh.invoke('echo', { prompt: 'x' }, 'wait=0', keyed(key));
    t.equal(res.status, 400, JSON.stringify(key));
    t.strictSame(res.json.error.details, [
      { path: '/Idempotency-Key', message: 'must be 1 to 255 printable ASCII characters' },
    ]);
    t.equal(res.json.error.code, 'invalid_input');
  }
  t.equal((await mesh.invoke('echo', { prompt: 'x' }, 'wait=0', keyed('k'.repeat(255)))).status, 202);
  t.equal((await mesh.invoke('echo', { prompt: 'x' }, 'wait=0', keyed('a key with spaces'))).status, 202);
});

t.test('the invoke operations describe the Idempotency-Key header', async (t) => {
  const doc = (await mesh.get('/docs/json')).json;
  t.match(
    doc.paths['/agents/echo/invoke'].post.description,
    /Idempotency-Key.*422 `idempotency_key_reused`/s,
  );
});

t.test(
  'a key claimed by a request that died before creating its invocation still starts it, once',
  async (t) => {
    // What a gateway killed between its SET NX and its create leaves behind.
    const sha = (s: string) => createHash('sha256').update(s).digest('hex');
    const owner = sha('alpha-key');
    const id = `inv_${'ab'.repeat(16)}`;
    const entry = {
      v: 1,
      invocationId: id,
      bodyHash: sha(canonicalJson({ prompt: 'orphan' })),
      at: Date.now(),
    };
    await mesh.client.set(mesh.keys.idempotency(sha(`${owner}|twin|orphaned`)), JSON.stringify(entry));
    const before = await mesh.queued('twin');
    const res = await mesh.invoke('twin', { prompt: 'orphan' }, 'wait=0', keyed('orphaned'));
    t.equal(res.status, 202);
    t.equal(res.json.id, id, 'the claimed id');
    t.equal(await mesh.queued('twin'), before + 1, 'its job is queued');
    const again = await mesh.invoke('twin', { prompt: 'orphan' }, 'wait=0', keyed('orphaned'));
    t.equal(again.json.id, id);
    t.equal(await mesh.queued('twin'), before + 1, 'once');
  },
);
