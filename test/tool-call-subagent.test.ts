// Upstream #1114 ToolCallActionSubagentTest, through the real mesh. Not ported here:
// rejectsAResultJsonCannotExpress / rejectsACyclicResult / absorbsAStackOverflow… need a result a
// model cannot produce (a ReAct child's output is JSON text): the normalizer pins them in
// packages/shared/test/json.test.ts and code agents will reach them end to end.
// refusesAnAgentResourceThatCarriesNoCallableSetup maps to an undeclared sub-agent below;
// propagatesInterruption… is the cancellation work of the durability issue.
import t from 'tap';
import { toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

const tool = (name: string, run: (args: Record<string, unknown>) => unknown = () => `${name} called`) => ({
  name,
  description: `The ${name} tool.`,
  input: { type: 'object', properties: {} },
  run,
});

/** A parent that makes the calls of `first` in turn 0, then answers with what its tools returned. */
const parentScript =
  (first: { name: string; args?: unknown; rawArgs?: string }[]) =>
  (r: { agent: string; messages: { role: string }[] }) =>
    turnOf(r as never) === 0 ? { calls: first } : { final: JSON.stringify(toolMessagesOf(r as never)) };

t.test('delegates to the sub-agent and reports its normalized result', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [reviewer]}
  reviewer:
    description: Reviews a diff.
    instructions: "@agent reviewer"
    output: {type: object, properties: {verdict: {type: string}, findings: {type: array, items: {type: string}}}, required: [verdict]}
`,
    script: (r) =>
      r.agent === 'reviewer'
        ? { final: '{"verdict":"approved","findings":["style"],"extra":1}' }
        : parentScript([{ name: '_subagent_reviewer', args: { prompt: 'review the diff' } }])(r),
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded');
  t.same(JSON.parse(res.json.output), [
    { id: 't0-call0', content: '{"verdict":"approved","findings":["style"]}' },
  ]);
  const child = mesh.model.of('reviewer')[0]!;
  t.same(
    child.messages.map((m) => m.content),
    [
      '@agent reviewer',
      'The final response should be json format, and match the schema {"type":"object","properties":{"verdict":{"type":"string"},"findings":{"type":"array","items":{"type":"string"}}},"required":["verdict"]}',
      'review the diff',
    ],
    'instructions, then the schema prompt, then the prompt text',
  );
});

t.test('hands the model arguments to the sub-agent unchanged', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [reviewer]}
  reviewer:
    instructions: "@agent reviewer"
    input: '{"type":"object","properties":{"path":{"type":"string"},"lines":{"type":"integer"}},"required":["path"]}'
`,
    script: (r) =>
      r.agent === 'reviewer'
        ? { final: 'done' }
        : parentScript([{ name: '_subagent_reviewer', args: { path: 'a.ts', lines: 3 } }])(r),
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded');
  t.equal(
    mesh.model.of('reviewer')[0]!.messages.at(-1)!.content,
    '{"path":"a.ts","lines":3}',
    'non-prompt input is compact JSON',
  );
  const child = await mesh.get(`/invocations/${res.json.calls[1].childId}`);
  t.same(child.json.input, { path: 'a.ts', lines: 3 }, 'no context injected into a sub-agent call');
});

t.test('reports a failed sub-agent with the detail exposed to the model', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [reviewer]}
  reviewer: {instructions: "@agent reviewer", maxIterations: 1}
`,
    script: (r) =>
      r.agent === 'reviewer'
        ? { calls: [{ name: 'missing' }] }
        : parentScript([{ name: '_subagent_reviewer', args: { prompt: 'x' } }])(r),
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded', 'a failed delegation never fails the parent');
  t.same(JSON.parse(res.json.output), [
    {
      id: 't0-call0',
      content: 'Sub-agent _subagent_reviewer execute failed: The agent reached its limit of 1 iterations.',
    },
  ]);
});

t.test('an invalid prompt is a child failure and does not call the child model', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [researcher]}
  researcher: {description: Researches., instructions: "@agent researcher"}
`,
    script: parentScript([{ name: '_subagent_researcher', args: { prompt: 42 } }]),
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.same(JSON.parse(res.json.output), [
    {
      id: 't0-call0',
      content:
        "Sub-agent _subagent_researcher execute failed: ReAct sub-agent input must be an object containing only a string 'prompt'.",
    },
  ]);
  t.equal(mesh.model.of('researcher').length, 0, 'the child model is never called');
  const child = await mesh.get(`/invocations/${res.json.calls[1].childId}`);
  t.match(child.json, { status: 'failed', error: { code: 'invalid_input' } });
  t.strictSame(child.json.calls, [], 'nor records one: its parent found the input invalid too');
});

t.test('routes a tool and a sub-agent sharing a name to their own namespace', async (t) => {
  const mesh = await startMesh(t, {
    tools: [tool('reviewer')],
    agentsYaml: `
  parent: {instructions: "@agent parent", tools: [reviewer], subagents: [reviewer]}
  reviewer: {description: Reviews., instructions: "@agent reviewer"}
`,
    script: (r) =>
      r.agent === 'reviewer'
        ? { final: 'done' }
        : parentScript([
            { name: '_subagent_reviewer', args: { prompt: 'x' } },
            { name: 'reviewer', args: {} },
          ])(r),
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.same(
    mesh.model.of('parent')[0]!.tools.map((x) => x.function.name),
    ['reviewer', '_subagent_reviewer'],
  );
  t.same(JSON.parse(res.json.output), [
    { id: 't0-call0', content: 'done' },
    { id: 't0-call1', content: 'reviewer called' },
  ]);
  t.same(
    res.json.calls.map((c: { callId: string; kind: string }) => [c.callId, c.kind]),
    [
      ['t0-model', 'model'],
      ['t0-call0', 'subagent'],
      ['t0-call1', 'tool'],
      ['t1-model', 'model'],
    ],
  );
});

t.test('parallel dispatch keeps tool and sub-agent results on their own ids', async (t) => {
  const mesh = await startMesh(t, {
    tools: [tool('alpha'), tool('beta')],
    agentsYaml: `
  parent: {instructions: "@agent parent", tools: [alpha, beta], subagents: [a]}
  a: {instructions: "@agent a"}
`,
    script: (r) =>
      r.agent === 'a'
        ? { final: 'agent-result', latencyMs: 50 }
        : parentScript([
            { name: '_subagent_a', args: { prompt: 'x' } },
            { name: 'alpha', args: {} },
            { name: 'beta', args: {} },
          ])(r),
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.same(JSON.parse(res.json.output), [
    { id: 't0-call0', content: 'agent-result' },
    { id: 't0-call1', content: 'alpha called' },
    { id: 't0-call2', content: 'beta called' },
  ]);
});

t.test('malformed arguments, unknown tools and undeclared sub-agents go back to the model', async (t) => {
  const mesh = await startMesh(t, {
    tools: [tool('alpha')],
    agentsYaml: `
  parent: {instructions: "@agent parent", tools: [alpha], subagents: [a]}
  a: {instructions: "@agent a"}
  stranger: {instructions: "@agent stranger"}
`,
    script: parentScript([
      { name: 'alpha', rawArgs: '{not json' },
      { name: 'nope', args: {} },
      { name: '_subagent_stranger', args: { prompt: 'x' } },
      { name: '_subagent_a', rawArgs: '[1,2]' },
      { name: 'alpha', args: {} },
    ]),
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded', 'the invocation continues');
  const out = JSON.parse(res.json.output) as { id: string; content: string }[];
  t.match(out[0]!.content, /^Tool alpha execute failed: INVALID_ARGUMENT \/: invalid JSON/);
  t.equal(out[1]!.content, 'Tool nope does not exist.');
  t.equal(
    out[2]!.content,
    'Sub-agent _subagent_stranger execute failed: Sub-agent stranger is not a declared sub-agent of parent.',
  );
  t.equal(
    out[3]!.content,
    'Sub-agent _subagent_a execute failed: INVALID_ARGUMENT /: type (expected object)',
  );
  t.equal(out[4]!.content, 'alpha called');
  t.equal(mesh.model.of('stranger').length + mesh.model.of('a').length, 0, 'no child ran');
});

t.test('a tool whose arguments fail its schema fails with the reason', async (t) => {
  const strict = {
    ...tool('alpha'),
    input: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
  };
  const mesh = await startMesh(t, {
    tools: [strict],
    agentsYaml: `
  parent: {instructions: "@agent parent", tools: [alpha]}
`,
    script: parentScript([{ name: 'alpha', args: { n: '1' } }]),
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.match(JSON.parse(res.json.output)[0].content, /^Tool alpha execute failed: .*\/n: must be integer/);
});
