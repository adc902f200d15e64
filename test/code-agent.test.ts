// Code agents through the real mesh: what ctx.subagent, ctx.step and memory do, the limits of a
// ReAct agent they run under, and ctx.memory across parks and runners. Each former file's tests are
// one heading subtest below (every test starts its own mesh), with its helpers; `fixture` is shared.
import path from 'node:path';
import { buildRunner } from '@agentmesh/agent-runner';
import { keyLayout, loadCodeAgents } from '@agentmesh/shared';
import t from 'tap';
import { toolMessagesOf, turnOf } from './support/fake-model.js';
import { queueFastPath, startMesh } from './support/mesh.js';

/** A code-agent module of test/fixtures/code-agents/. */
const fixture = (name: string) => path.resolve(import.meta.dirname, `fixtures/code-agents/${name}.mjs`);

// ---------------------------------------------------------------------------------------------------
// Code agents (docs/reference/configuration.md, docs/reference/callables-and-results.md, docs/architecture/durability-and-fencing.md): ctx.subagent returns child results as data, calls started
// together are all submitted before the parent parks, ctx.step runs once across replays, memory
// is the invocation's own, and a ReAct parent may delegate to a code agent.
t.test(
  'code agents: child results as data, calls started together, steps run once, ReAct parents',
  async (t) => {
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
  },
);

// ---------------------------------------------------------------------------------------------------
// Code agents run under the limits of a ReAct agent (docs/architecture/durability-and-fencing.md, docs/reference/bounds.md): the deadline ends the
// invocation (also while it is parked), a delegation past MESH_MAX_DEPTH creates no child, and
// calls started together past MESH_MAX_DELEGATIONS_PER_TURN / MESH_MAX_CALLS_PER_TURN are refused
// as data — recorded, so every replay answers them the same way.
t.test("code agents under a ReAct agent's limits: the deadline, the depth, calls per turn", async (t) => {
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
});

// ---------------------------------------------------------------------------------------------------
// A code agent's ctx.memory survives its parks (docs/architecture/durability-and-fencing.md): writes are committed with the next
// durable record and a replay sees, at every recorded call, what the first run had committed
// there — also writes made inside a ctx.step fn, which a replay skips, and on another runner.
t.test("a code agent's ctx.memory survives its parks, also on another runner", async (t) => {
  const agentsYaml = `  keeper: {module: '${fixture('memory-keeper')}', subagents: [researcher]}
  researcher: {description: Researches., instructions: "@agent researcher"}
`;
  const expected = {
    inside: 'seeded',
    seenBeforePark: { from: 'step' },
    afterPark: { from: 'step' },
    gone: null,
    count: 1,
    child: 'child answer',
  };

  t.test(
    'memory written inside and before a step is read back after the invocation parks and replays',
    async (t) => {
      const mesh = await startMesh(t, {
        agentsYaml,
        script: () => ({ final: 'child answer', latencyMs: 200 }),
      });
      const res = await mesh.invoke('keeper', { prompt: 'go' });
      t.equal(res.json.status, 'succeeded', JSON.stringify(res.json.error));
      t.same(res.json.output, expected, 'count is 1: the replay does not see the state of its future');
      const id = res.json.id;
      t.same(await mesh.client.hgetall(keyLayout(mesh.prefix).memory(id, id)), {
        count: '1',
        inside: '{"from":"step"}',
      });
    },
  );

  t.test('memory is restored by a runner that did not write it', async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml,
      script: () => ({ final: 'child answer', latencyMs: 1500 }),
      runners: 0,
    });
    const start = async () => {
      const runner = await buildRunner({
        config: mesh.config,
        codeAgents: await loadCodeAgents(mesh.config),
        redisUrl: mesh.redis.url,
        prefix: mesh.prefix,
        toolHostUrl: mesh.toolHostUrl,
        concurrency: 4,
        retentionSeconds: 3600,
        limits: { maxDepth: 8, maxDelegationsPerTurn: 16, maxResultBytes: 65536, maxRecoveries: 5 },
        lockDurationMs: 3000,
        queueFastPath: queueFastPath(),
        metricsPort: 0,
        log: { info() {}, warn() {}, error() {}, debug() {} },
      });
      let closed: Promise<void> | undefined;
      const close = () => (closed ??= runner.close());
      t.teardown(close);
      return { id: runner.id, close };
    };
    const first = await start();
    const started = await mesh.invoke('keeper', { prompt: 'go' }, 'wait=0');
    const id = started.json.id;
    await mesh.waitForStatus(id, 'waiting', 20_000);
    await first.close(); // drains: the child finishes here, the parked parent is left to the next runner
    const second = await start();
    const done = await mesh.waitForStatus(id, 'succeeded', 30_000);
    t.same(done.output, expected);
    t.equal(
      await mesh.client.hget(keyLayout(mesh.prefix).invocation(id, id), 'runner'),
      second.id,
      'the replay ran on the new runner',
    );
  });
});
