// A fork on a three-master Redis Cluster (docs/guides/deploying.md, docs/guides/durability.md): the node is read on its tree's slot and
// the fork written on its own; a fork holding both a reused delegation (the original tree's child,
// another slot) and a live one streams its tree and is cancelled without crossing slots.
import { rootOf } from '@agentmesh/shared';
import t, { type Test } from 'tap';
import { turnOf } from '../support/fake-model.js';
import { startMesh, type TestMesh } from '../support/mesh.js';

t.test('a fork with a reused and a live delegation streams and cancels on its own slot', async (t) => {
  let slow = false;
  const mesh = await startMesh(t, {
    cluster: true,
    agentsYaml: `
  lead: {instructions: "@agent lead", subagents: [helper]}
  helper: {description: Helps., instructions: "@agent helper"}
`,
    script: (r) => {
      if (r.agent === 'helper') return { final: 'helped', ...(slow ? { latencyMs: 20_000 } : {}) };
      if (turnOf(r) > 0) return { final: 'done' };
      return { calls: [1, 2].map((i) => ({ name: '_subagent_helper', args: { prompt: `h${i}` } })) };
    },
  });
  const original = (await mesh.invoke('lead', { prompt: 'go' })).json;
  t.equal(original.status, 'succeeded');
  // Four forks: each lands on a random node, so most likely one away from the original's.
  for (let i = 0; i < 4; i++) await checkFork(t, mesh, original);

  slow = true;
  const running = await mesh.request('POST', `/invocations/${original.id}/fork?wait=0`, {
    payload: { fromCallId: 't0-call1' },
  });
  await mesh.waitForStatus(running.json.id, 'waiting', 30_000);
  t.equal((await mesh.request('DELETE', `/invocations/${running.json.id}`)).status, 202);
  t.equal((await mesh.waitForStatus(running.json.id, 'cancelled', 30_000)).status, 'cancelled');
});

/** Forks `original` from its second delegation and reads the fork's whole event stream. */
async function checkFork(t: Test, mesh: TestMesh, original: { id: string }): Promise<void> {
  const fork = await mesh.request('POST', `/invocations/${original.id}/fork?wait=30`, {
    payload: { fromCallId: 't0-call1' },
  });
  t.equal(fork.status, 200);
  const [reused, live] = fork.json.calls.filter((c: { kind: string }) => c.kind === 'subagent');
  t.same([reused.reused, rootOf(reused.childId)], [true, original.id]);
  t.same([live.reused, rootOf(live.childId)], [undefined, fork.json.id]);
  const text = (await mesh.gateway.app.inject({ method: 'GET', url: `/invocations/${fork.json.id}/events` }))
    .body;
  const events = text
    .split('\n')
    .filter((l) => l.startsWith('data: '))
    .map((l) => JSON.parse(l.slice(6)));
  t.same(
    events.slice(0, 3).map((e) => [e.type, e.data.callId, e.data.reused]),
    [
      ['model_call', 't0-model', true],
      ['delegation_started', 't0-call0', true],
      ['delegation_finished', 't0-call0', true],
    ],
  );
  t.ok(
    events.some((e) => e.invocationId === live.childId && e.data.status === 'succeeded'),
    "the live child's events are in the fork's stream",
  );
  t.equal(events.at(-1).data.status, 'succeeded');
}
