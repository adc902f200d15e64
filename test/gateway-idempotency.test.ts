// Idempotency-Key on POST /agents/{name}/invoke (DESIGN §3): same key, same agent, same API key →
// the same invocation and one run, also under concurrent duplicates; another body → 422.
import { createHash } from 'node:crypto';
import { canonicalJson, keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { startMesh } from './support/mesh.js';

const alpha = { authorization: 'Bearer alpha-key' };
const beta = { authorization: 'Bearer beta-key' };
const keyed = (key: string, auth = alpha) => ({ ...auth, 'idempotency-key': key });

const mesh = await startMesh(t, {
  apiKeys: 'alpha-key,beta-key',
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
  script: (r) => ({ final: `${r.agent} done`, latencyMs: r.agent === 'slow' ? 400 : 0 }),
});
const runs = (agent: string) => mesh.model.of(agent).length;

t.test('the same Idempotency-Key twice answers the same invocation, and the model runs once', async (t) => {
  const first = await mesh.invoke('echo', { prompt: 'hi' }, 'wait=30', keyed('order-1'));
  t.equal(first.status, 200);
  const second = await mesh.invoke('echo', { prompt: 'hi' }, 'wait=30', keyed('order-1'));
  t.equal(second.status, 200);
  t.strictSame(second.json, first.json, 'the same finished view');
  t.equal(runs('echo'), 1, 'one model call');
  const pairA = await mesh.invoke('pair', { a: 1, b: 2 }, 'wait=30', keyed('pair-1'));
  const pairB = await mesh.invoke('pair', { b: 2, a: 1 }, 'wait=30', keyed('pair-1'));
  t.equal(pairB.json.id, pairA.json.id, 'key order in the body does not matter');
  t.equal(runs('pair'), 1);
});

t.test('10 concurrent duplicates start one invocation and one run', async (t) => {
  const before = await mesh.client.zcard(keyLayout(mesh.prefix).recent());
  const all = await Promise.all(
    Array.from({ length: 10 }, () => mesh.invoke('slow', { prompt: 'once' }, 'wait=30', keyed('burst'))),
  );
  t.strictSame(
    all.map((r) => r.status),
    Array(10).fill(200),
  );
  t.equal(new Set(all.map((r) => r.json.id)).size, 1, 'one invocation id');
  t.ok(all.every((r) => r.json.status === 'succeeded' && r.json.output === 'slow done'));
  t.equal(runs('slow'), 1, 'one model call');
  t.equal(await mesh.client.zcard(keyLayout(mesh.prefix).recent()), before + 1, 'one invocation listed');
});

t.test('the same key with another body answers 422 idempotency_key_reused', async (t) => {
  t.equal((await mesh.invoke('echo', { prompt: 'a' }, 'wait=30', keyed('reuse'))).status, 200);
  const res = await mesh.invoke('echo', { prompt: 'b' }, 'wait=30', keyed('reuse'));
  t.equal(res.status, 422);
  t.strictSame(res.json, {
    error: {
      code: 'idempotency_key_reused',
      message: 'This Idempotency-Key was used with a different request.',
    },
  });
});

t.test('the same key for another agent, or with another API key, starts another invocation', async (t) => {
  const echo = await mesh.invoke('echo', { prompt: 'x' }, 'wait=30', keyed('shared'));
  const twin = await mesh.invoke('twin', { prompt: 'x' }, 'wait=30', keyed('shared'));
  const other = await mesh.invoke('echo', { prompt: 'x' }, 'wait=30', keyed('shared', beta));
  t.equal(new Set([echo.json.id, twin.json.id, other.json.id]).size, 3);
  t.equal(
    (await mesh.invoke('echo', { prompt: 'x' }, 'wait=30', keyed('shared', beta))).json.id,
    other.json.id,
    'each API key has its own keys',
  );
  const free = await mesh.invoke('echo', { prompt: 'x' }, 'wait=30');
  t.not(free.json.id, echo.json.id, 'without a key every request starts one');
});

t.test('a repeated request honours its own ?wait=', async (t) => {
  const first = await mesh.invoke('slow', { prompt: 'w' }, 'wait=0', keyed('waits'));
  t.equal(first.status, 202);
  const quick = await mesh.invoke('slow', { prompt: 'w' }, 'wait=0', keyed('waits'));
  t.equal(quick.status, 202);
  t.equal(quick.headers.location, `/invocations/${first.json.id}`);
  const patient = await mesh.invoke('slow', { prompt: 'w' }, 'wait=30', keyed('waits'));
  t.equal(patient.status, 200);
  t.equal(patient.json.id, first.json.id);
  t.equal(patient.json.status, 'succeeded');
  t.equal((await mesh.invoke('slow', { prompt: 'w' }, 'wait=0', keyed('waits'))).status, 200, 'finished');
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
  t.equal((await mesh.invoke('echo', { prompt: 'x' }, 'wait=30', keyed('k'.repeat(255)))).status, 200);
  t.equal((await mesh.invoke('echo', { prompt: 'x' }, 'wait=30', keyed('a key with spaces'))).status, 200);
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
    await mesh.client.set(
      keyLayout(mesh.prefix).idempotency(sha(`${owner}|twin|orphaned`)),
      JSON.stringify(entry),
    );
    const before = runs('twin');
    const res = await mesh.invoke('twin', { prompt: 'orphan' }, 'wait=30', keyed('orphaned'));
    t.equal(res.status, 200);
    t.equal(res.json.id, id, 'the claimed id');
    t.equal(res.json.output, 'twin done');
    t.equal(runs('twin'), before + 1);
  },
);
