// A large answer is stored once per tree (issue 24, item 9): a child answering 200 KB used to leave
// it in its state's output, in its final model call's record and in its parent's delegation record
// (and its parent's answer, quoting it, twice more). Now each text past 16 KiB is one entry of the
// tree's texts hash, which the others refer to, and every reader puts it back: the views, the
// call details, the events, the parent's model on its next turn, a fork. Bytes are measured in
// Redis (the values of every key of the tree, MEMORY USAGE), never by timing.
import { createHash } from 'node:crypto';
import { keyLayout, truncateResult } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { listenGateway, startMesh, type TestMesh } from './support/mesh.js';
import { PARENT_AND_CHILD } from './support/parent-and-child.js';
import { openSse } from './support/sse.js';

const keys = keyLayout('mesh');
// One per mesh: each test below counts where its own text lives.
const answerOf = (prompt: string) => `${prompt}:${'c'.repeat(200_000)}`;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

/** The child answers 200 KB (its prompt first); the parent then answers quoting its tool message. */
function startLargeMesh(maxResultBytes?: number): Promise<TestMesh> {
  return startMesh(t, {
    agentsYaml: PARENT_AND_CHILD,
    ...(maxResultBytes ? { limits: { maxResultBytes } } : {}),
    script: (r) => {
      const last = r.messages.at(-1)!.content as string;
      if (r.agent === 'child') return { final: answerOf(last) };
      return turnOf(r) === 0
        ? { calls: [{ name: '_subagent_child', args: { prompt: r.messages.at(-1)!.content } }] }
        : { final: `parent got ${last}` };
    },
  });
}

/** Every value stored under the tree's keys (hash values, strings, stream entries), with its key. */
async function treeValues(mesh: TestMesh, rootId: string): Promise<{ key: string; value: string }[]> {
  const found = await mesh.client.keys(`mesh:{${rootId}}:*`);
  const out: { key: string; value: string }[] = [];
  for (const key of found) {
    const type = await mesh.client.type(key);
    const values =
      type === 'hash'
        ? Object.values(await mesh.client.hgetall(key))
        : type === 'string'
          ? [(await mesh.client.get(key))!]
          : type === 'stream'
            ? (await mesh.client.xrange(key, '-', '+')).flatMap(([, fields]) => fields)
            : [];
    for (const value of values) out.push({ key, value });
  }
  return out;
}

const memory = async (mesh: TestMesh, rootId: string) => {
  let bytes = 0;
  for (const key of await mesh.client.keys(`mesh:{${rootId}}:*`))
    bytes += Number(await mesh.client.call('MEMORY', 'USAGE', key, 'SAMPLES', '0'));
  return bytes;
};

t.test('a large answer is stored once in its tree, and every reader shows it whole', async (t) => {
  const mesh = await startLargeMesh(1024 * 1024);
  const res = await mesh.invoke('parent', { prompt: 'once' });
  t.equal(res.json.status, 'succeeded');
  const id = res.json.id as string;
  const text = answerOf('once');
  t.equal(res.json.output, `parent got ${text}`, "the ?wait answer: the parent's whole answer");
  const childId = res.json.calls.find((c: { kind: string }) => c.kind === 'subagent').childId as string;

  const stored = await treeValues(mesh, id);
  const holding = stored.filter((v) => v.value.includes(text)).map((v) => v.key);
  t.equal(holding.length, 2, "the child's answer, and the parent's that quotes it: one value each");
  // Two texts and the allocator's rounding (about 2.3 of them); five copies before.
  const bytes = await memory(mesh, id);
  t.ok(bytes < 3 * text.length, `the tree takes ${bytes} bytes in Redis for two texts of ${text.length}`);
  t.same(holding, [keys.texts(id), keys.texts(id)], "both in the tree's texts");
  t.equal(await mesh.client.hget(keys.texts(id), sha(text)), text);

  const child = (await mesh.get(`/invocations/${childId}`)).json;
  t.equal(child.output, text, 'GET of the child: its whole answer');
  t.equal((await mesh.get(`/invocations/${id}`)).json.output, `parent got ${text}`);
  const reply = (await mesh.get(`/invocations/${childId}/calls/t0-model`)).json;
  t.equal(reply.result.content, text, "the child's final model call: the whole reply");
  const delegation = (await mesh.get(`/invocations/${id}/calls/t0-call0`)).json;
  t.equal(delegation.result.content, text, "the parent's delegation: the whole tool message");
  t.equal(delegation.result.output, text, "and the child's output");
  const next = (await mesh.get(`/invocations/${id}/calls/t1-model`)).json;
  t.equal(
    next.request.messages.at(-1).content,
    text,
    "the parent's next model call, as rebuilt from records",
  );
  t.equal(mesh.model.of('parent').at(-1)!.messages.at(-1)!.content, text, 'and as the model got it');

  const { base } = await listenGateway(t, mesh);
  const s = await openSse(`${base}/invocations/${id}/events`);
  await s.ended;
  const of = (type: string, who: string) =>
    s.events.filter((e) => e.event === type && e.data.invocationId === who).map((e) => e.data.data);
  t.equal(of('output', childId)[0]?.output, text, "the child's output event");
  t.equal(of('model_call', childId)[0]?.content, text, "the child's model_call event");
  t.equal(of('output', id)[0]?.output, `parent got ${text}`, "the parent's output event");
});

t.test("a delegation's result cut at MESH_MAX_RESULT_BYTES refers to the whole answer", async (t) => {
  const mesh = await startLargeMesh();
  const res = await mesh.invoke('parent', { prompt: 'cut' });
  const id = res.json.id as string;
  const text = answerOf('cut');
  const cut = truncateResult(text, 65536);
  t.not(cut, text);
  const delegation = (await mesh.get(`/invocations/${id}/calls/t0-call0`)).json;
  t.equal(delegation.result.content, cut, 'the tool message is the cut text, as before');
  t.equal(mesh.model.of('parent').at(-1)!.messages.at(-1)!.content, cut, 'and the model got it');
  const stored = await treeValues(mesh, id);
  const holding = stored.filter((v) => v.value.includes(cut.slice(0, 60_000))).map((v) => v.key);
  t.equal(
    holding.length,
    2,
    "the whole answer once, and the parent's answer quoting the cut: no copy of the cut",
  );
  t.same(holding, [keys.texts(id), keys.texts(id)]);
});

t.test('a fork copies the texts its records refer to into its own tree', async (t) => {
  const mesh = await startLargeMesh(1024 * 1024);
  const original = (await mesh.invoke('parent', { prompt: 'fork' })).json;
  const text = answerOf('fork');
  const res = await mesh.request('POST', `/invocations/${original.id}/fork?wait=30`, {
    payload: { fromCallId: 't1-model' },
  });
  t.equal(res.json.status, 'succeeded');
  const fork = res.json.id as string;
  t.equal(res.json.output, `parent got ${text}`, "the fork's model got the whole reused tool message");
  t.equal(await mesh.client.hget(keys.texts(fork), sha(text)), text, "the fork's tree has its own copy");
  await mesh.client.del(keys.texts(original.id));
  const delegation = (await mesh.get(`/invocations/${fork}/calls/t0-call0`)).json;
  t.equal(delegation.result.content, text, "its reused delegation reads it from the fork's tree alone");
  const ttl = await mesh.client.ttl(keys.texts(fork));
  t.ok(ttl >= (await mesh.client.ttl(keys.calls(fork, fork))), 'and it lives as long as its records');
});

t.test("the tree's texts outlive every key that refers to them", async (t) => {
  const mesh = await startLargeMesh(1024 * 1024);
  const res = await mesh.invoke('parent', { prompt: 'ttl' });
  const id = res.json.id as string;
  const childId = res.json.calls.find((c: { kind: string }) => c.kind === 'subagent').childId as string;
  const referrers = [
    keys.invocation(id, id),
    keys.calls(id, id),
    keys.invocation(id, childId),
    keys.calls(id, childId),
    keys.events(id),
  ];
  // Read at one instant (MULTI), so the TTLs compare as set.
  const multi = mesh.client.multi();
  for (const k of [keys.texts(id), ...referrers]) multi.pttl(k);
  const [texts = 0, ...ttls] = ((await multi.exec()) ?? []).map(([, ms]) => ms as number);
  t.ok(
    ttls.every((ms) => ms > 0 && texts >= ms),
    `texts ${texts} ms, referrers ${ttls.join(', ')} ms`,
  );
  t.ok(texts <= 3600 * 1000, 'the retention TTL, no longer');
});
