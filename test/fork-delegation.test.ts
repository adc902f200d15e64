// Forks and delegations (docs/guides/durability.md), through the real mesh: a reused delegation keeps the original
// child, which is not run again (nor cancelled with the fork), a fork at the delegation runs a new
// child of its own, a given result starts none, and a child node forks as a root of its agent.
import { rootOf } from '@agentmesh/shared';
import t from 'tap';
import { type FakeScript, toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

let helped = 0;
const SCRIPT: FakeScript = (r) => {
  if (r.agent === 'helper') return { final: `helped ${++helped}` };
  if (turnOf(r) === 0)
    return {
      calls: [
        { name: 'note', args: { text: 'x' } },
        { name: '_subagent_helper', args: { prompt: 'help' } },
      ],
    };
  return {
    final: toolMessagesOf(r)
      .map((m) => m.content)
      .join(' | '),
  };
};

const notes = { runs: 0 };
const mesh = await startMesh(t, {
  agentsYaml: `
  lead: {instructions: "@agent lead", tools: [note], subagents: [helper]}
  helper: {description: Helps., instructions: "@agent helper"}
`,
  script: SCRIPT,
  tools: [
    {
      name: 'note',
      description: 'Notes.',
      input: { type: 'object' },
      run: async () => `noted ${++notes.runs}`,
    },
  ],
});

const raw = async (id: string) =>
  (await mesh.gateway.app.inject({ method: 'GET', url: `/invocations/${id}` })).body;
const fork = (id: string, body: unknown, query = 'wait=30') =>
  mesh.request('POST', `/invocations/${id}/fork?${query}`, { payload: body });
const callOf = (view: { calls: { callId: string }[] }, callId: string) =>
  view.calls.find((c) => c.callId === callId) as Record<string, unknown>;

const original = (await mesh.invoke('lead', { prompt: 'go' })).json;
t.equal(original.output, 'noted 1 | helped 1');
const childId = callOf(original, 't0-call1').childId as string;
t.equal(rootOf(childId), original.id);

t.test('a reused delegation keeps the original child, which does not run again', async (t) => {
  const [lead, child] = [await raw(original.id), await raw(childId)];
  const asked = mesh.model.of('helper').length;
  const res = await fork(original.id, { fromCallId: 't1-model' });
  t.equal(res.status, 200);
  t.equal(res.json.output, 'noted 1 | helped 1', 'the reused results reached the model');
  t.equal(mesh.model.of('helper').length, asked, 'the child was not run again');
  t.equal(notes.runs, 1);
  const call = callOf(res.json, 't0-call1');
  t.same([call.reused, call.childId, call.status], [true, childId, 'succeeded'], "the original's child");
  t.equal(await raw(original.id), lead, 'the original is unchanged');
  t.equal(await raw(childId), child, 'its child too: not re-parented');
});

t.test('a fork at the delegation runs a new child of its own', async (t) => {
  const asked = mesh.model.of('helper').length;
  const res = await fork(original.id, { fromCallId: 't0-call1' });
  t.equal(res.status, 200);
  t.equal(mesh.model.of('helper').length, asked + 1, 'the sub-agent ran again');
  const call = callOf(res.json, 't0-call1');
  t.notOk(call.reused);
  t.not(call.childId, childId);
  t.equal(rootOf(call.childId as string), res.json.id, "the new child is in the fork's tree");
  t.equal(res.json.output, `noted 1 | helped ${asked + 1}`);
  t.equal(res.json.treeUsage.modelCalls, 2, "the fork's tree counts its new child's call and its own");
});

t.test('a delegation given a result starts no child', async (t) => {
  const asked = mesh.model.of('helper').length;
  const res = await fork(original.id, { fromCallId: 't0-call1', result: { answer: 42 } });
  t.equal(res.status, 200);
  t.equal(mesh.model.of('helper').length, asked);
  const call = callOf(res.json, 't0-call1');
  t.same([call.resultGiven, call.childId, call.status], [true, undefined, 'succeeded']);
  t.equal(res.json.output, 'noted 1 | {"answer":42}');
});

t.test('a child node forks as a root of its own agent', async (t) => {
  const child = (await mesh.get(`/invocations/${childId}`)).json;
  const asked = mesh.model.of('helper').length;
  const res = await fork(childId, { fromCallId: 't0-model' });
  t.equal(res.status, 200);
  t.equal(res.json.agent, 'helper');
  t.equal(res.json.rootId, res.json.id);
  t.notOk(res.json.parentId, 'no parent');
  t.same(res.json.input, child.input, "the child's input");
  t.same(res.json.forkedFrom, { invocationId: childId, callId: 't0-model' });
  t.equal(mesh.model.of('helper').length, asked + 1);
  t.equal(res.json.output, `helped ${asked + 1}`);
});

t.test("cancelling a fork cancels its own calls, never the original's child", async (t) => {
  const child = await raw(childId);
  mesh.model.setScript((r) => ({ ...SCRIPT(r), latencyMs: 10_000 }));
  t.teardown(() => mesh.model.setScript(SCRIPT));
  const res = await fork(original.id, { fromCallId: 't1-model' }, 'wait=0');
  t.equal(res.status, 202);
  await mesh.waitForStatus(res.json.id, 'running');
  t.equal((await mesh.request('DELETE', `/invocations/${res.json.id}`)).status, 202);
  const ended = await mesh.waitForStatus(res.json.id, 'cancelled');
  t.equal(callOf(ended, 't0-call1').childId, childId);
  t.equal(await raw(childId), child, "the original's child is untouched");
});
