// Upstream #1200 ReActSubagentTest, model-delegation cases, run through the real mesh:
// gateway → runner (BullMQ child jobs) → tool-host, against a fake OpenAI-compatible model.
// explicitCallRunsTheChildToolLoop… is the code-agents issue; replayRestoresChildMemory… is the
// durability issue (its crash test lives in test/faults/).
import t from 'tap';
import { type SeenRequest, toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

const evidence = {
  name: 'evidence',
  description: 'Looks up evidence.',
  input: { type: 'object', properties: { topic: { type: 'string' } }, required: ['topic'] },
  run: async (args: unknown) => `evidence about ${(args as { topic: string }).topic}`,
};

const labels = (rs: SeenRequest[]) =>
  rs.map((r) => `${r.agent}:${r.messages.at(-1)?.role === 'tool' ? 'tool' : 'user'}`);

t.test('model delegation resumes the parent with the child answer', async (t) => {
  const mesh = await startMesh(t, {
    tools: [evidence],
    agentsYaml: `
  parent:
    description: Plans.
    instructions: "@agent parent"
    subagents: [researcher]
  researcher:
    description: Research a task and report what the evidence says.
    instructions: "@agent researcher"
    tools: [evidence]
`,
    script: (r) => {
      if (r.agent === 'parent') {
        return turnOf(r) === 0
          ? { calls: [{ name: '_subagent_researcher', args: { prompt: 'investigate' } }] }
          : { final: 'parent answer' };
      }
      return turnOf(r) === 0
        ? { calls: [{ name: 'evidence', args: { topic: 'x' } }] }
        : { final: 'child answer' };
    },
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.equal(res.status, 200, JSON.stringify(res.json));
  t.equal(res.json.status, 'succeeded');
  t.equal(res.json.output, 'parent answer');
  t.same(labels(mesh.model.requests), ['parent:user', 'researcher:user', 'researcher:tool', 'parent:tool']);
  const parentFirst = mesh.model.of('parent')[0]!;
  t.same(
    parentFirst.tools.map((x) => x.function.name),
    ['_subagent_researcher'],
    'the parent sees exactly its sub-agent callable',
  );
  t.match(parentFirst.tools[0]!.function.description, /Research a task/);
  t.equal(
    parentFirst.tools[0]!.function.description,
    'Research a task and report what the evidence says. This is subagent.',
  );
  const childFirst = mesh.model.of('researcher')[0]!;
  t.same(
    childFirst.tools.map((x) => x.function.name),
    ['evidence'],
    'the child sees only its own tools',
  );
  t.same(
    childFirst.messages.map((m) => [m.role, m.content]),
    [
      ['system', '@agent researcher'],
      ['user', 'investigate'],
    ],
    'the child gets its instructions and the prompt text, never the routing description',
  );
  t.same(toolMessagesOf(mesh.model.of('parent')[1]!), [{ id: 't0-call0', content: 'child answer' }]);
  const call = res.json.calls.find((c: { kind: string }) => c.kind === 'subagent');
  t.match(call, {
    callId: 't0-call0',
    name: 'researcher',
    status: 'succeeded',
    childId: /^inv_[0-9a-f]{32}-[0-9a-f]{16}$/,
  });
  t.ok(call.runner, 'the call names the runner that submitted it');
  const child = await mesh.get(`/invocations/${call.childId}`);
  t.match(child.json, {
    status: 'succeeded',
    output: 'child answer',
    parentId: res.json.id,
    rootId: res.json.id,
  });
});
