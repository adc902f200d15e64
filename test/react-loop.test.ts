// The ReAct loop's contract with the model: the tool list it receives, the messages, the limits.
import t from 'tap';
import { toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

const lookup = {
  name: 'lookup',
  description: 'Looks a path up.',
  input: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  run: () => 'found',
};

t.test(
  'the model receives its tools, then its sub-agents, with descriptions and schemas, and no listing message',
  async (t) => {
    const mesh = await startMesh(t, {
      tools: [lookup],
      agentsYaml: `
  planner:
    instructions: "@agent planner"
    tools: [lookup]
    subagents: [reviewer, helper]
  reviewer:
    description: Reviews a file.
    instructions: "@agent reviewer"
    input: {type: object, properties: {path: {type: string}}}
  helper:
    description: "   "
    instructions: "@agent helper"
`,
      script: () => ({ final: 'ok' }),
    });
    const res = await mesh.invoke('planner', { prompt: 'hello' });
    t.equal(res.json.status, 'succeeded');
    const seen = mesh.model.of('planner')[0]!;
    t.same(seen.tools, [
      {
        type: 'function',
        function: { name: 'lookup', description: 'Looks a path up.', parameters: lookup.input },
      },
      {
        type: 'function',
        function: {
          name: '_subagent_reviewer',
          description: 'Reviews a file. This is subagent.',
          parameters: { type: 'object', properties: { path: { type: 'string' } } },
        },
      },
      {
        type: 'function',
        function: {
          name: '_subagent_helper',
          description: 'Delegate a standalone task to sub-agent helper This is subagent.',
          parameters: {
            type: 'object',
            properties: { prompt: { type: 'string' } },
            required: ['prompt'],
            additionalProperties: false,
          },
        },
      },
    ]);
    t.same(
      seen.messages,
      [
        { role: 'system', content: '@agent planner' },
        { role: 'user', content: 'hello' },
      ],
      'declaring sub-agents adds no message',
    );
    const described = await mesh.get('/agents/planner');
    t.same(
      described.json.callables,
      seen.tools.map((x) => x.function),
      'GET /agents/{name} shows exactly the tool list the model receives',
    );
  },
);

t.test(
  'maxIterations ends an invocation that keeps calling tools with max_iterations_exceeded',
  async (t) => {
    const mesh = await startMesh(t, {
      tools: [lookup],
      agentsYaml: `
  looper: {instructions: "@agent looper", tools: [lookup], maxIterations: 3}
`,
      script: () => ({ calls: [{ name: 'lookup', args: { path: 'x' } }] }),
    });
    const res = await mesh.invoke('looper', { prompt: 'go' });
    t.match(res.json, { status: 'failed', error: { code: 'max_iterations_exceeded' } });
    t.equal(mesh.model.requests.length, 3, 'exactly maxIterations model calls');
  },
);

t.test('a delegation past the depth limit goes back to the model as a failed tool message', async (t) => {
  const mesh = await startMesh(t, {
    limits: { maxDepth: 1 },
    agentsYaml: `
  a: {instructions: "@agent a", subagents: [b]}
  b: {instructions: "@agent b", subagents: [c]}
  c: {instructions: "@agent c"}
`,
    script: (r) => {
      if (turnOf(r) > 0) return { final: `${r.agent}: ${JSON.stringify(toolMessagesOf(r))}` };
      if (r.agent === 'a') return { calls: [{ name: '_subagent_b', args: { prompt: 'x' } }] };
      if (r.agent === 'b') return { calls: [{ name: '_subagent_c', args: { prompt: 'y' } }] };
      return { final: 'c' };
    },
  });
  const res = await mesh.invoke('a', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded');
  t.match(res.json.output, /Sub-agent _subagent_c execute failed: Delegation depth limit 1 reached\./);
  t.equal(mesh.model.of('c').length, 0);
});

t.test('more delegations in one turn than allowed fail as tool messages past the limit', async (t) => {
  const mesh = await startMesh(t, {
    limits: { maxDelegationsPerTurn: 2 },
    agentsYaml: `
  a: {instructions: "@agent a", subagents: [b]}
  b: {instructions: "@agent b"}
`,
    script: (r) =>
      r.agent === 'b'
        ? { final: 'b' }
        : turnOf(r) === 0
          ? { calls: [1, 2, 3].map((i) => ({ name: '_subagent_b', args: { prompt: `${i}` } })) }
          : { final: JSON.stringify(toolMessagesOf(r).map((m) => m.content)) },
  });
  const res = await mesh.invoke('a', { prompt: 'go' });
  t.same(JSON.parse(res.json.output), [
    'b',
    'b',
    'Sub-agent _subagent_b execute failed: At most 2 delegations are allowed in one turn.',
  ]);
});

t.test('a final answer failing the output schema goes back to the model at most twice', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  judge:
    instructions: "@agent judge"
    output: {type: object, properties: {ok: {type: boolean}}, required: [ok]}
`,
    script: (r) =>
      turnOf(r) === 0
        ? { final: 'not json' }
        : turnOf(r) === 1
          ? { final: '{"ok":"yes"}' }
          : { final: '{"ok":true,"x":1}' },
  });
  const res = await mesh.invoke('judge', { prompt: 'go' });
  t.match(res.json, { status: 'succeeded', output: { ok: true } });
  t.notOk('x' in res.json.output, 'narrowing drops what the schema does not list');
  const third = mesh.model.requests[2]!;
  t.match(third.messages.at(-1), {
    role: 'user',
    content: /does not match the schema: \/ok: must be boolean/,
  });
  t.match(mesh.model.requests[1]!.messages.at(-1), { role: 'user', content: /not valid JSON/ });
});

t.test(
  'a final answer that keeps failing the output schema fails the invocation with invalid_output',
  async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: `
  judge:
    instructions: "@agent judge"
    output: {type: object, properties: {ok: {type: boolean}}, required: [ok]}
`,
      script: () => ({ final: 'never json' }),
    });
    const res = await mesh.invoke('judge', { prompt: 'go' });
    t.match(res.json, { status: 'failed', error: { code: 'invalid_output' } });
    t.equal(mesh.model.requests.length, 3, 'the first answer and two retries');
  },
);

t.test('a model endpoint that refuses the request fails the invocation with its code', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  solo: {instructions: "@agent solo"}
`,
    script: () => ({ status: 400, body: { error: { message: 'bad tools' } } }),
  });
  const res = await mesh.invoke('solo', { prompt: 'go' });
  t.match(res.json, { status: 'failed', error: { code: 'model_error', message: /400: bad tools/ } });
  t.equal(mesh.model.requests.length, 1, 'a 400 is not retried');
});

t.test('a tool past its timeout goes back to the model as a failed tool message', async (t) => {
  const slow = {
    ...lookup,
    name: 'slow',
    timeoutMs: 200,
    run: () => new Promise((r) => setTimeout(() => r('late'), 2000)),
  };
  const mesh = await startMesh(t, {
    tools: [slow],
    agentsYaml: `
  a: {instructions: "@agent a", tools: [slow]}
`,
    script: (r) =>
      turnOf(r) === 0
        ? { calls: [{ name: 'slow', args: { path: 'x' } }] }
        : { final: toolMessagesOf(r)[0]!.content! },
  });
  const res = await mesh.invoke('a', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded', 'the invocation goes on');
  t.equal(res.json.output, 'Tool slow execute failed: no answer within 200 ms');
});
