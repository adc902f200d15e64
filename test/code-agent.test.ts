// Code agents (docs/reference/configuration.md, docs/reference/callables-and-results.md, docs/architecture/durability-and-fencing.md): ctx.subagent returns child results as data, calls started
// together are all submitted before the parent parks, ctx.step runs once across replays, memory
// is the invocation's own, and a ReAct parent may delegate to a code agent.
import path from 'node:path';
import t from 'tap';
import { toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

const fixture = (name: string) => path.resolve(import.meta.dirname, `fixtures/code-agents/${name}.mjs`);
const evidence = {
  name: 'evidence',
  description: 'Looks up evidence.',
  input: { type: 'object', properties: {} },
  run: () => 'evidence found',
};
const researcher = `
  researcher: {description: Researches., instructions: "@agent researcher", tools: [evidence]}
`;
const researcherScript =
  (latencyMs = 0) =>
  (r: any) =>
    turnOf(r) === 0
      ? { calls: [{ name: 'evidence', args: {} }], latencyMs }
      : { final: `child answer to ${r.messages[1].content}` };

t.test("an explicit call runs the child's tool loop and returns its answer as data", async (t) => {
  const mesh = await startMesh(t, {
    tools: [evidence],
    agentsYaml: `  boss: {module: '${fixture('explicit-call')}', subagents: [researcher]}\n${researcher}`,
    script: researcherScript(),
  });
  const res = await mesh.invoke('boss', { topic: 'redis' });
  t.equal(res.json.status, 'succeeded', JSON.stringify(res.json.error));
  t.equal(res.json.output, 'child answer to research redis');
  t.same(
    mesh.model.requests.map((r) => `${r.agent}:${r.messages.at(-1)!.role}`),
    ['researcher:user', 'researcher:tool'],
    'the child ran its tool loop; the code agent itself calls no model',
  );
  const agents = await mesh.get('/agents/boss');
  t.same(agents.json.input, {
    type: 'object',
    properties: { topic: { type: 'string' } },
    required: ['topic'],
  });
});

t.test(
  'calls started together overlap; steps run once across replays; failures come back as data',
  async (t) => {
    (globalThis as any).meshStepRuns = 0;
    const mesh = await startMesh(t, {
      tools: [evidence],
      agentsYaml: `  fan: {module: '${fixture('fan-out')}', subagents: [researcher]}\n${researcher}  stranger: {instructions: "@agent stranger"}\n`,
      script: researcherScript(300),
    });
    const res = await mesh.invoke('fan', { prompt: 'go' });
    t.equal(res.json.status, 'succeeded', JSON.stringify(res.json.error));
    t.same(res.json.output, {
      answers: ['child answer to a', 'child answer to b', 'invalid_input', 'agent_not_found'],
      steps: 41,
      seen: { n: 42 },
    });
    t.equal(
      (globalThis as any).meshStepRuns,
      1,
      'the step ran once, though the code was replayed after each park',
    );
    const firstCalls = mesh.model.requests.filter((r) => turnOf(r) === 0);
    t.equal(firstCalls.length, 2);
    t.ok(
      Math.max(...firstCalls.map((r) => r.arrivedAt)) < Math.min(...firstCalls.map((r) => r.doneAt!)),
      'both delegations started together were in flight at once',
    );
    const kinds = res.json.calls.map((c: any) => `${c.callId}:${c.kind}:${c.name}:${c.status}`);
    t.same(kinds, [
      't0-call0:tool:step:count:succeeded',
      't0-call1:subagent:researcher:succeeded',
      't0-call2:subagent:researcher:succeeded',
      't0-call3:subagent:researcher:failed',
    ]);
    const memory = await mesh.client.hgetall(`${mesh.prefix}:{${res.json.id}}:mem:${res.json.id}`);
    t.same(memory, { before: '{"n":42}' }, 'memory writes were committed');
  },
);

t.test('a ReAct parent delegates to a code agent like to any sub-agent', async (t) => {
  const mesh = await startMesh(t, {
    tools: [evidence],
    agentsYaml: `  planner: {instructions: "@agent planner", subagents: [boss]}\n  boss: {description: Digs., module: '${fixture('explicit-call')}', subagents: [researcher]}\n${researcher}`,
    script: (r) =>
      r.agent === 'planner'
        ? turnOf(r) === 0
          ? { calls: [{ name: '_subagent_boss', args: { topic: 'bullmq' } }] }
          : { final: toolMessagesOf(r)[0]!.content! }
        : researcherScript()(r),
  });
  const planner = await mesh.get('/agents/planner');
  t.same(planner.json.callables[0].parameters, {
    type: 'object',
    properties: { topic: { type: 'string' } },
    required: ['topic'],
  });
  const res = await mesh.invoke('planner', { prompt: 'go' });
  t.equal(res.json.output, 'child answer to research bullmq');
});

t.test(
  'a recorded call that does not match the code is reported and the records from there on discarded',
  async (t) => {
    (globalThis as any).meshFickle = undefined;
    const mesh = await startMesh(t, {
      tools: [evidence],
      agentsYaml: `  fickle: {module: '${fixture('fickle')}', subagents: [researcher]}\n${researcher}`,
      script: researcherScript(),
    });
    const res = await mesh.invoke('fickle', { prompt: 'go' });
    t.equal(res.json.status, 'succeeded', JSON.stringify(res.json.error));
    t.equal(
      res.json.output,
      'b:child answer to x',
      'the replay ran the new step and reused the finished child',
    );
    t.same(
      res.json.calls.map((c: any) => `${c.callId}:${c.name}:${c.status}`),
      ['t0-call0:step:b:succeeded', 't0-call1:researcher:succeeded'],
    );
    t.equal(mesh.model.of('researcher').length, 2, 'the child itself ran once (two model calls)');
  },
);
