// The ReAct loop through a whole mesh (gateway → runner → tool-host, a fake OpenAI-compatible model):
// its contract with the model (tool list, messages, limits), model delegation to a sub-agent, and the
// dispatch of tool and sub-agent calls with the failures that go back to the model. Each former file's
// tests are one heading subtest below, starting and stopping their own meshes, their helpers inside it.
import t from 'tap';
import { type SeenRequest, toolMessagesOf, turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

// ---------------------------------------------------------------------------------------------------
// The ReAct loop's contract with the model: the tool list it receives, the messages, the limits.
t.test("the ReAct loop's contract with the model: its tool list, messages and limits", async (t) => {
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
});

// ---------------------------------------------------------------------------------------------------
// Upstream #1200 ReActSubagentTest, model-delegation cases, run through the real mesh:
// gateway → runner (BullMQ child jobs) → tool-host, against a fake OpenAI-compatible model.
// explicitCallRunsTheChildToolLoop… is the code-agents issue; replayRestoresChildMemory… is the
// durability issue (its crash test lives in test/faults/).
t.test(
  'model delegation resumes the parent with the child answer (upstream ReActSubagentTest)',
  async (t) => {
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
      t.same(labels(mesh.model.requests), [
        'parent:user',
        'researcher:user',
        'researcher:tool',
        'parent:tool',
      ]);
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
  },
);

// ---------------------------------------------------------------------------------------------------
// Upstream #1114 ToolCallActionSubagentTest, through the real mesh. Not ported here:
// rejectsAResultJsonCannotExpress / rejectsACyclicResult / absorbsAStackOverflow… need a result a
// model cannot produce (a ReAct child's output is JSON text): the normalizer pins them in
// packages/shared/test/json.test.ts and code agents will reach them end to end.
// refusesAnAgentResourceThatCarriesNoCallableSetup maps to an undeclared sub-agent below;
// propagatesInterruption… is the cancellation work of the durability issue.
t.test('tool and sub-agent calls of one turn (upstream ToolCallActionSubagentTest)', async (t) => {
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
});
