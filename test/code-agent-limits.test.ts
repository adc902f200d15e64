// Code agents run under the limits of a ReAct agent (docs/architecture/durability-and-fencing.md, docs/reference/bounds.md): the deadline ends the
// invocation (also while it is parked), a delegation past MESH_MAX_DEPTH creates no child, and
// calls started together past MESH_MAX_DELEGATIONS_PER_TURN / MESH_MAX_CALLS_PER_TURN are refused
// as data — recorded, so every replay answers them the same way.
import path from 'node:path';
import t from 'tap';
import { startMesh } from './support/mesh.js';

const fixture = (name: string) => path.resolve(import.meta.dirname, `fixtures/code-agents/${name}.mjs`);
const researcher = `  researcher: {description: Researches., instructions: "@agent researcher"}\n`;
const answer = () => (r: any) => ({ final: `child answer to ${r.messages[1].content}`, latencyMs: 100 });
const callsOf = (view: any) =>
  view.calls.map((c: any) => `${c.callId}:${c.name}:${c.status}${c.childId ? ':child' : ''}`);

t.test(
  'a delegation past the depth limit comes back as max_depth_exceeded and creates no child',
  async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: `  boss: {module: '${fixture('explicit-call')}', subagents: [researcher]}\n${researcher}`,
      script: answer(),
      limits: { maxDepth: 0 },
    });
    const res = await mesh.invoke('boss', { topic: 'redis' });
    t.equal(res.json.status, 'succeeded', JSON.stringify(res.json.error));
    t.equal(res.json.output, 'failed: max_depth_exceeded');
    t.same(callsOf(res.json), ['t0-call0:researcher:failed'], 'the refusal is recorded, without a child');
    t.equal(mesh.model.requests.length, 0, 'no child ran');
    t.same(await mesh.client.keys(`${mesh.prefix}:{${res.json.id}}:inv:*`), [
      `${mesh.prefix}:{${res.json.id}}:inv:${res.json.id}`,
    ]);
  },
);

t.test(
  'delegations started together past the per-turn limit come back as too_many_delegations; awaited ones do not count together',
  async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: `  fan: {module: '${fixture('fan-limits')}', subagents: [researcher]}\n${researcher}`,
      script: answer(),
      limits: { maxDelegationsPerTurn: 2 },
    });
    const res = await mesh.invoke('fan', { prompt: 'go' });
    t.equal(res.json.status, 'succeeded', JSON.stringify(res.json.error));
    t.same(res.json.output, {
      together: ['child answer to a', 'child answer to b', 'too_many_delegations', 'too_many_delegations'],
      oneByOne: ['child answer to e', 'child answer to f', 'child answer to g'],
    });
    t.same(callsOf(res.json), [
      't0-call0:researcher:succeeded:child',
      't0-call1:researcher:succeeded:child',
      't0-call2:researcher:failed',
      't0-call3:researcher:failed',
      't0-call4:researcher:succeeded:child',
      't0-call5:researcher:succeeded:child',
      't0-call6:researcher:succeeded:child',
    ]);
    t.same(
      mesh.model
        .of('researcher')
        .map((r) => r.messages[1]!.content)
        .sort(),
      ['a', 'b', 'e', 'f', 'g'],
      'five children ran, each once, though the code was replayed after every park',
    );
  },
);

t.test(
  'steps and delegations started together past MESH_MAX_CALLS_PER_TURN come back as too_many_calls',
  async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: `  calls: {module: '${fixture('call-limits')}', subagents: [researcher]}\n${researcher}`,
      script: answer(),
      limits: { maxCallsPerTurn: 3 },
    });
    const res = await mesh.invoke('calls', { prompt: 'go' });
    t.equal(res.json.status, 'succeeded', JSON.stringify(res.json.error));
    t.same(
      res.json.output,
      [1, 'child answer to a', 2, 'too_many_calls', 'threw too_many_calls'],
      'the replay after the park answered the refusals from their records',
    );
    t.same(callsOf(res.json), [
      't0-call0:step:one:succeeded',
      't0-call1:researcher:succeeded:child',
      't0-call2:step:two:succeeded',
      't0-call3:researcher:failed',
      't0-call4:step:three:failed',
    ]);
    t.same(
      mesh.model.of('researcher').map((r) => r.messages[1]!.content),
      ['a'],
    );
  },
);

t.test(
  'a code agent running past its deadline ends deadline_exceeded and its ctx.signal aborts',
  async (t) => {
    (globalThis as any).meshSlowStepAborted = undefined;
    const mesh = await startMesh(t, { agentsYaml: `  slow: {module: '${fixture('slow-step')}'}\n` });
    const res = await mesh.invoke('slow', { prompt: 'go' }, 'wait=30&timeout=1');
    t.equal(res.status, 200);
    t.match(res.json, { status: 'failed', error: { code: 'deadline_exceeded' } });
    t.equal((globalThis as any).meshSlowStepAborted, 'deadline_exceeded', 'the step saw ctx.signal abort');
  },
);

t.test("a parked code agent's deadline fires while it waits on a child that never runs", async (t) => {
  const mesh = await startMesh(t, {
    watchdog: { intervalMs: 300, minParkedMs: 500 },
    runnerAgents: ['boss'],
    agentsYaml: `  boss: {module: '${fixture('explicit-call')}', subagents: [researcher]}\n${researcher}`,
    script: answer(),
  });
  const res = await mesh.invoke('boss', { topic: 'redis' }, 'wait=30&timeout=1');
  t.equal(res.status, 200);
  t.match(res.json, { status: 'failed', error: { code: 'deadline_exceeded' } });
  t.same(callsOf(res.json), ['t0-call0:researcher:started:child'], 'it was parked on its child');
  t.equal(mesh.model.requests.length, 0, 'the child never ran');
});
