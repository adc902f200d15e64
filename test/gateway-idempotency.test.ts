// Idempotency-Key on POST /agents/{name}/invoke (docs/reference/rest-api.md) with runs: a duplicate
// answers the same finished view and the model runs once, also under concurrent duplicates; a
// repeat honours its own ?wait=. The keys' rules without runs (422, scopes, malformed keys) are
// services/gateway/test/idempotency.test.ts.
import { createHash } from 'node:crypto';
import { canonicalJson, keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { startMesh } from './support/mesh.js';

const alpha = { authorization: 'Bearer alpha-key' };
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
