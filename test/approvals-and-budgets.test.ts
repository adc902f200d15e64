// Approvals and budgets (docs/guides/approvals-and-budgets.md) through a whole mesh: calls that wait for
// a human's decision, and token budgets that cap a whole invocation tree. Each former file's tests are
// one heading subtest below, starting and stopping their own meshes, their helpers inside it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { RunnerOptions } from '@agentmesh/agent-runner';
import { ConfigError, parseConfig } from '@agentmesh/shared';
import t, { type Test } from 'tap';
import { type FakeScript, type SeenRequest, toolMessagesOf, turnOf } from './support/fake-model.js';
import { addRunner, startMesh, type TestMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

// ---------------------------------------------------------------------------------------------------
// Approvals (docs/guides/approvals-and-budgets.md): a call of a callable that needs approval waits, holding no worker slot,
// until its owner decides through POST /invocations/{id}/approvals/{callId}; run through the real
// mesh (gateway → runners → tool-host) against the fake model.
t.test('approvals: a call waits, holding no slot, until its owner decides', async (t) => {
  const coderFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'approvals-')), 'coder.mjs');
  fs.writeFileSync(
    coderFile,
    `export default {
  async run(input, ctx) {
    const d = await ctx.approval('deploy', { env: 'prod', hosts: [] });
    const n = await ctx.step('after', () => 1);
    return d.approved ? 'deployed ' + n : 'refused: ' + (d.reason ?? '-');
  },
};
`,
  );

  const AGENTS = `
  boss: {instructions: "@agent boss", tools: [charge, lookup]}
  planner: {instructions: "@agent planner", subagents: [mid]}
  mid: {instructions: "@agent mid", subagents: [leaf]}
  leaf: {instructions: "@agent leaf", tools: [charge, lookup]}
  guard: {instructions: "@agent guard", subagents: [deployer], approvals: [_subagent_deployer]}
  deployer: {instructions: "@agent deployer"}
  plain: {instructions: "@agent plain"}
  coder: {module: '${coderFile}'}
`;

  /** The final answer of a turn after tools: their tool messages, joined. */
  const answer = (r: SeenRequest) =>
    toolMessagesOf(r)
      .map((m) => m.content)
      .join(' | ');

  const SCRIPT: FakeScript = (r) => {
    const first = turnOf(r) === 0;
    if (r.agent === 'boss' || r.agent === 'leaf') {
      return first
        ? {
            calls: [
              { name: 'charge', args: { amount: 5, items: [] } },
              { name: 'lookup', args: { q: 'x' } },
            ],
          }
        : { final: answer(r) };
    }
    if (r.agent === 'planner')
      return first ? { calls: [{ name: '_subagent_mid', args: { prompt: 'p' } }] } : { final: answer(r) };
    if (r.agent === 'mid')
      return first ? { calls: [{ name: '_subagent_leaf', args: { prompt: 'l' } }] } : { final: answer(r) };
    if (r.agent === 'guard')
      return first
        ? { calls: [{ name: '_subagent_deployer', args: { prompt: 'd' } }] }
        : { final: answer(r) };
    if (r.agent === 'deployer') return { final: 'deployed' };
    return { final: 'plain answer' };
  };

  function tools(runs: { charge: number }) {
    return [
      {
        name: 'charge',
        description: 'Charges money.',
        input: { type: 'object', properties: { amount: { type: 'number' } } },
        needsApproval: true,
        run: async (args: unknown) => {
          runs.charge++;
          return `charged ${(args as { amount: number }).amount}`;
        },
      },
      {
        name: 'lookup',
        description: 'Looks up.',
        input: { type: 'object', properties: { q: { type: 'string' } } },
        run: async () => 'found',
      },
    ];
  }

  async function mesh(t: Test, opts: { apiKeys?: string } = {}) {
    const runs = { charge: 0 };
    const m = await startMesh(t, { tools: tools(runs), agentsYaml: AGENTS, script: SCRIPT, ...opts });
    return { m, runs };
  }

  const decide = (m: TestMesh, id: string, callId: string, body: unknown) =>
    m.request('POST', `/invocations/${id}/approvals/${callId}`, { payload: body });

  t.test('a call that needs approval waits; the others run; approving runs it once', async (t) => {
    const { m, runs } = await mesh(t);
    const agent = (await m.get('/agents/boss')).json;
    t.same(agent.approvals, ['charge'], 'GET /agents shows the callables that need approval');
    const started = await m.invoke('boss', { prompt: 'go' }, 'wait=0');
    const id = started.json.id;
    const waiting = await m.waitForStatus(id, 'waiting');
    t.same(
      waiting.calls.filter((c: any) => c.kind === 'tool').map((c: any) => [c.name, c.status]),
      [
        ['charge', 'awaiting_approval'],
        ['lookup', 'succeeded'],
      ],
      "the turn's other call ran",
    );
    t.equal(waiting.pendingApprovals.length, 1);
    t.match(waiting.pendingApprovals[0], {
      callId: 't0-call0',
      name: 'charge',
      args: { amount: 5, items: [] },
    });
    t.ok(Date.parse(waiting.pendingApprovals[0].requestedAt) > 0);
    t.equal(runs.charge, 0, 'the tool did not run');
    const task = await m.request('POST', '/a2a/boss', {
      payload: { jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id } },
      headers: { 'content-type': 'application/json', 'a2a-version': '1.0' },
    });
    t.match(task.json.result.status.state, /INPUT_REQUIRED|input-required/i, 'over A2A: input-required');

    const list = (await m.get('/approvals')).json;
    t.match(list.items, [
      {
        invocationId: id,
        rootId: id,
        agent: 'boss',
        callId: 't0-call0',
        name: 'charge',
        args: { amount: 5 },
      },
    ]);

    t.match((await decide(m, id, 't9-call9', { approved: true })).json, {
      error: { code: 'approval_not_found' },
    });
    t.equal((await decide(m, id, 't9-call9', { approved: true })).status, 404);
    t.equal((await decide(m, id, 't0-call0', { approved: 'yes' })).status, 400, 'the body is validated');
    const decidedAt = Date.now();
    const ok = await decide(m, id, 't0-call0', { approved: true });
    t.equal(ok.status, 200);
    t.equal(ok.json.id, id);
    t.same(ok.json.pendingApprovals, [], 'a decided approval is no longer pending');
    t.equal(
      (await decide(m, id, 't0-call0', { approved: true })).status,
      200,
      'the same decision again: 200',
    );
    const conflict = await decide(m, id, 't0-call0', { approved: false, reason: 'no' });
    t.equal(conflict.status, 409);
    t.equal(conflict.json.error.code, 'approval_conflict');
    t.same((await m.get('/approvals')).json.items, [], 'a decided approval leaves the list at once');

    const done = await m.waitForStatus(id, 'succeeded');
    t.equal(done.output, 'charged 5 | found');
    t.equal(runs.charge, 1, 'the approved tool ran once');
    t.equal((await decide(m, id, 't0-call0', { approved: true })).status, 200, 'also after the end');
    const resumed = m.model.of('boss').at(-1)!;
    t.comment(`approval to resumed model call: ${resumed.arrivedAt - decidedAt} ms`);
  });

  t.test('a rejection reaches the model with its reason', async (t) => {
    const { m, runs } = await mesh(t);
    for (const [body, text] of [
      [{ approved: false, reason: 'too expensive' }, 'Tool charge was not approved: too expensive'],
      [{ approved: false }, 'Tool charge was not approved.'],
    ] as const) {
      const id = (await m.invoke('boss', { prompt: 'go' }, 'wait=0')).json.id;
      await m.waitForStatus(id, 'waiting');
      t.equal((await decide(m, id, 't0-call0', body)).status, 200);
      const done = await m.waitForStatus(id, 'succeeded');
      t.equal(done.output, `${text} | found`);
      t.same(toolMessagesOf(m.model.of('boss').at(-1)!)[0], { id: 't0-call0', content: text });
      t.equal(done.calls.find((c: any) => c.callId === 't0-call0').status, 'rejected');
    }
    t.equal(runs.charge, 0, 'a rejected tool never runs');
  });

  t.test('how long a decision takes to reach the model (printed, not asserted)', async (t) => {
    const { m } = await mesh(t);
    const gaps: number[] = [];
    for (let i = 0; i < 5; i++) {
      const id = (await m.invoke('boss', { prompt: `go ${i}` }, 'wait=0')).json.id;
      await m.waitForStatus(id, 'waiting');
      const decidedAt = Date.now();
      await decide(m, id, 't0-call0', { approved: i % 2 === 0 });
      await m.waitForStatus(id, 'succeeded');
      gaps.push(m.model.of('boss').at(-1)!.arrivedAt - decidedAt);
    }
    gaps.sort((a, b) => a - b);
    t.comment(`decision to resumed model call, ms: median ${gaps[2]} of [${gaps.join(', ')}]`);
    t.equal(gaps.length, 5);
  });

  t.test('an approval asked by a grandchild shows in its view and in the root stream', async (t) => {
    const { m, runs } = await mesh(t);
    const id = (await m.invoke('planner', { prompt: 'go' }, 'wait=0')).json.id;
    const { root, midId, leafId } = await waitUntil(
      async () => {
        const root = (await m.get(`/invocations/${id}`)).json;
        const midId = root.calls.find((c: any) => c.childId)?.childId;
        const mid = midId && (await m.get(`/invocations/${midId}`)).json;
        const leafId = mid?.calls.find((c: any) => c.childId)?.childId;
        const waiting = leafId && (await m.get(`/invocations/${leafId}`)).json.status === 'waiting';
        return waiting && root.status === 'waiting' ? { root, midId, leafId } : undefined;
      },
      30_000,
      () => 'the grandchild to wait',
    );
    const leaf = (await m.get(`/invocations/${leafId}`)).json;
    t.match(leaf.pendingApprovals, [{ callId: 't0-call0', name: 'charge', args: { amount: 5 } }]);
    // The root meanwhile: parked on its delegation (docs/architecture/durability-and-fencing.md: `waiting`, no slot held), which is
    // still pending; the approval is the grandchild's, not listed as the root's own.
    const rootNow = (await m.get(`/invocations/${id}`)).json;
    t.equal(rootNow.status, 'waiting', 'the root waits on its child');
    t.match(rootNow.calls, [
      { kind: 'model', status: 'succeeded' },
      { kind: 'subagent', name: 'mid', status: 'started', childId: midId },
    ]);
    t.equal(rootNow.calls.length, 2, 'nothing after the delegation');
    t.same(rootNow.pendingApprovals, [], "the root's own approvals: none");
    t.notOk(rootNow.finishedAt ?? rootNow.output, 'not finished');
    t.same(root.calls, rootNow.calls, 'unchanged while the grandchild waits');
    const mid = (await m.get(`/invocations/${midId}`)).json;
    t.match(mid, { status: 'waiting', parentId: id, pendingApprovals: [] });
    t.match(mid.calls.at(-1), { kind: 'subagent', name: 'leaf', status: 'started', childId: leafId });
    t.match((await m.get('/approvals')).json.items, [{ invocationId: leafId, rootId: id, agent: 'leaf' }]);
    t.equal((await decide(m, leafId, 't0-call0', { approved: true })).status, 200);
    const done = await m.waitForStatus(id, 'succeeded');
    t.equal(done.output, 'charged 5 | found');
    t.match(done.calls[1], { kind: 'subagent', name: 'mid', status: 'succeeded', childId: midId });
    t.equal(runs.charge, 1);
    const res = await m.gateway.app.inject({ method: 'GET', url: `/invocations/${id}/events` });
    const events = res.body
      .split('\n\n')
      .map((block) => block.split('\n').find((l) => l.startsWith('data: ')))
      .filter((l): l is string => l !== undefined)
      .map((l) => JSON.parse(l.slice(6)));
    const asked = events.filter((e) => e.type === 'approval_requested');
    t.equal(asked.length, 1, 'one approval_requested event in the root stream');
    t.equal(asked[0].invocationId, leafId, 'naming the node that asks');
    t.same(asked[0].data, { callId: 't0-call0', name: 'charge', args: { amount: 5, items: [] } });
  });

  t.test('?wait answers as soon as some node of the tree waits on a human decision', async (t) => {
    const { m } = await mesh(t);
    // Without the early answer each request below holds its whole 300 s wait.
    const soon = <T>(p: Promise<T>, what: string) =>
      Promise.race([
        p,
        new Promise<never>((_, reject) =>
          setTimeout(() => reject(new Error(`${what}: still waiting after 30 s`)), 30_000).unref(),
        ),
      ]);
    for (const [agent, asks] of [
      ['boss', 'the root'],
      ['planner', 'a grandchild'],
    ] as const) {
      const key = { 'content-type': 'application/json', 'idempotency-key': `wait-${agent}` };
      const res = await soon(m.invoke(agent, { prompt: 'go' }, 'wait=300', key), `${agent}: ${asks} asks`);
      t.equal(res.status, 202, `${asks} asks: answered before the wait ends`);
      t.equal(res.headers.location, `/invocations/${res.json.id}`);
      t.equal(res.json.status, 'waiting');
      const pending = (await m.get('/approvals')).json.items.filter((a: any) => a.rootId === res.json.id);
      t.match(
        pending,
        [{ name: 'charge', agent: agent === 'boss' ? 'boss' : 'leaf' }],
        'GET /approvals lists it',
      );
      if (agent === 'boss') t.match(res.json.pendingApprovals, [{ callId: 't0-call0', name: 'charge' }]);
      const again = await soon(
        m.invoke(agent, { prompt: 'go' }, 'wait=300', key),
        `${agent}: the same key again`,
      );
      t.equal(again.status, 202, 'the same Idempotency-Key again: answered at once too');
      t.equal(again.json.id, res.json.id);
    }
    const plain = await m.invoke('plain', { prompt: 'go' }, 'wait=300');
    t.equal(plain.status, 200, 'a tree that needs no decision is waited for as before');
  });

  t.test('a delegation in approvals: starts only once approved', async (t) => {
    const { m } = await mesh(t);
    const id = (await m.invoke('guard', { prompt: 'go' }, 'wait=0')).json.id;
    const waiting = await m.waitForStatus(id, 'waiting');
    t.match(waiting.pendingApprovals, [
      { callId: 't0-call0', name: '_subagent_deployer', args: { prompt: 'd' } },
    ]);
    t.match(waiting.calls[1], { kind: 'subagent', name: 'deployer', status: 'awaiting_approval' });
    t.notOk(waiting.calls[1].childId, 'no child before the approval');
    t.equal(m.model.of('deployer').length, 0, 'the sub-agent did not run');
    t.equal((await decide(m, id, 't0-call0', { approved: true })).status, 200);
    const done = await m.waitForStatus(id, 'succeeded');
    t.equal(done.output, 'deployed');
    t.equal(m.model.of('deployer').length, 1);
    t.ok(done.calls[1].childId);

    const id2 = (await m.invoke('guard', { prompt: 'go' }, 'wait=0')).json.id;
    await m.waitForStatus(id2, 'waiting');
    await decide(m, id2, 't0-call0', { approved: false, reason: 'not today' });
    const rejected = await m.waitForStatus(id2, 'succeeded');
    t.equal(rejected.output, 'Sub-agent _subagent_deployer was not approved: not today');
    t.equal(m.model.of('deployer').length, 1, 'a rejected delegation never starts');
  });

  t.test('the deadline and a DELETE end an invocation waiting on an approval', async (t) => {
    const { m } = await mesh(t);
    const late = (await m.invoke('boss', { prompt: 'go' }, 'wait=0&timeout=2')).json.id;
    await m.waitForStatus(late, 'waiting');
    const failed = await m.waitForStatus(late, 'failed', 30_000);
    t.equal(failed.error.code, 'deadline_exceeded');
    t.same(failed.pendingApprovals, []);
    t.equal((await decide(m, late, 't0-call0', { approved: true })).status, 409, 'too late to decide');

    const id = (await m.invoke('boss', { prompt: 'go' }, 'wait=0')).json.id;
    await m.waitForStatus(id, 'waiting');
    t.equal((await m.request('DELETE', `/invocations/${id}`)).status, 202);
    const cancelled = await m.waitForStatus(id, 'cancelled', 10_000);
    t.equal(cancelled.status, 'cancelled');
    t.same((await m.get('/approvals')).json.items, [], 'ended ones are not listed');
  });

  t.test('a code agent asks with ctx.approval() and replays the decision', async (t) => {
    const { m } = await mesh(t);
    const id = (await m.invoke('coder', { prompt: 'go' }, 'wait=0')).json.id;
    const waiting = await m.waitForStatus(id, 'waiting');
    t.match(waiting.pendingApprovals, [{ name: 'deploy', args: { env: 'prod', hosts: [] } }]);
    const callId = waiting.pendingApprovals[0].callId;
    t.equal((await decide(m, id, callId, { approved: false, reason: 'freeze' })).status, 200);
    const done = await m.waitForStatus(id, 'succeeded');
    t.equal(done.output, 'refused: freeze');

    const id2 = (await m.invoke('coder', { prompt: 'go' }, 'wait=0')).json.id;
    await m.waitForStatus(id2, 'waiting');
    await decide(m, id2, callId, { approved: true });
    t.equal((await m.waitForStatus(id2, 'succeeded')).output, 'deployed 1');
  });

  t.test('only the key that started the tree sees and decides its approvals', async (t) => {
    const alpha = { authorization: 'Bearer alpha-key-1' };
    const beta = { authorization: 'Bearer beta-key-2' };
    const { m, runs } = await mesh(t, { apiKeys: 'alpha-key-1, beta-key-2' });
    const id = (await m.invoke('boss', { prompt: 'go' }, 'wait=0', alpha)).json.id;
    await waitUntil(
      async () => (await m.get(`/invocations/${id}`, alpha)).json.status === 'waiting',
      30_000,
      () => 'waiting',
    );
    const url = `/invocations/${id}/approvals/t0-call0`;
    const denied = await m.request('POST', url, { payload: { approved: true }, headers: beta });
    t.equal(denied.status, 404, 'another key: as if it did not exist');
    t.equal(denied.json.error.code, 'approval_not_found');
    t.same((await m.get('/approvals', beta)).json.items, [], "another key's list is empty");
    t.equal((await m.get('/approvals', alpha)).json.items.length, 1);
    t.equal((await m.request('POST', url, { payload: { approved: true } })).status, 401, 'no key: 401');
    t.equal((await m.request('POST', url, { payload: { approved: true }, headers: alpha })).status, 200);
    await waitUntil(
      async () => (await m.get(`/invocations/${id}`, alpha)).json.status === 'succeeded',
      30_000,
      () => 'succeeded',
    );
    t.equal(runs.charge, 1);
  });

  t.test('approvals naming a callable the agent does not have is a config error', async (t) => {
    const text = `models:\n  default: {provider: openai, baseUrl: 'http://x', apiKey: k, model: m}\nagents:\n  a: {instructions: i, tools: [t1], subagents: [b], approvals: [t1, _subagent_b, ghost, _subagent_a]}\n  b: {instructions: i}\n  c: {module: ./c.mjs, approvals: [x]}\n`;
    const err = t.throws(() => parseConfig(text, '/cfg/mesh.yaml', {}, 'yaml')) as ConfigError;
    t.ok(err instanceof ConfigError);
    const problems = err.problems.map((p) => `${p.path}: ${p.message}`);
    t.match(problems, [/^agents\.a\.approvals\[2\]: unknown callable "ghost"/]);
    t.ok(problems.some((p) => p.startsWith('agents.a.approvals[3]: unknown callable "_subagent_a"')));
    t.ok(problems.some((p) => p.startsWith('agents.c.approvals: only a ReAct agent takes approvals')));
    t.ok(err.problems.every((p) => p.file === '/cfg/mesh.yaml'));
  });
});

// ---------------------------------------------------------------------------------------------------
// docs/guides/approvals-and-budgets.md Budgets: `?budget=` and `maxTokens` cap the tokens of a whole invocation tree; one
// counter per tree, `budget_exceeded` failing the root with its descendants cancelled, and
// `treeUsage` rolled up exactly once. The fake model answers every request with 11 + 7 tokens.
t.test('token budgets: ?budget and maxTokens cap a whole invocation tree', async (t) => {
  const TOKENS_PER_CALL = 18;
  const WORKERS = 4;

  const step = {
    name: 'step',
    description: 'One more step.',
    input: { type: 'object' },
    run: async () => 'ok',
  };

  type Usage = { modelCalls: number; promptTokens: number; completionTokens: number };
  const add = (a: Usage, b: Usage): Usage => ({
    modelCalls: a.modelCalls + b.modelCalls,
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
  });

  /** Every view of the tree under `id` once all of them are terminal. */
  async function finishedTree(mesh: TestMesh, id: string): Promise<any[]> {
    const views: any[] = [];
    for (const queue = [id]; queue.length > 0; ) {
      const view = await waitTerminal(mesh, queue.shift()!);
      views.push(view);
      for (const c of view.calls) if (c.childId) queue.push(c.childId);
    }
    return views;
  }

  async function waitTerminal(mesh: TestMesh, id: string): Promise<any> {
    for (;;) {
      const v = (await mesh.get(`/invocations/${id}`)).json;
      if (['succeeded', 'failed', 'cancelled'].includes(v.status)) return v;
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  t.test('token budgets', async (t) => {
    const mesh = await startMesh(t, {
      tools: [step],
      concurrency: 8,
      agentsYaml: `
  boss:
    description: Splits work.
    instructions: "@agent boss"
    subagents: [worker]
  worker:
    description: Works step by step.
    instructions: "@agent worker"
    tools: [step]
    maxIterations: 50
  looper:
    description: Loops.
    instructions: "@agent looper"
    tools: [step]
    maxIterations: 50
    maxTokens: 40
  small:
    description: Three steps, then an answer.
    instructions: "@agent small"
    tools: [step]
    maxTokens: 20
  lead:
    description: Delegates to small.
    instructions: "@agent lead"
    subagents: [small]
`,
      script: (r) => {
        if (r.agent === 'boss' && turnOf(r) === 0) {
          const calls = Array.from({ length: WORKERS }, (_, i) => ({
            name: '_subagent_worker',
            args: { prompt: `part ${i}` },
          }));
          return { calls };
        }
        if (r.agent === 'boss') return { final: 'done' };
        if (r.agent === 'small')
          return turnOf(r) < 3 ? { calls: [{ name: 'step', args: {} }] } : { final: 'small done' };
        if (r.agent === 'lead') {
          return turnOf(r) === 0
            ? { calls: [{ name: '_subagent_small', args: { prompt: 'go' } }] }
            : { final: 'led' };
        }
        return { calls: [{ name: 'step', args: {} }], latencyMs: 5 };
      },
    });

    await t.test('children exhausting the budget fail the root with budget_exceeded', async (t) => {
      const budget = 200;
      const res = await mesh.invoke('boss', { prompt: 'go' }, `wait=30&budget=${budget}`);
      t.equal(res.status, 200, JSON.stringify(res.json));
      t.equal(res.json.status, 'failed');
      t.same(res.json.error, {
        code: 'budget_exceeded',
        message: `The token budget of ${budget} tokens for this invocation tree is exhausted.`,
      });
      const views = await finishedTree(mesh, res.json.id);
      const children = views.slice(1);
      t.equal(children.length, WORKERS);
      for (const c of children) t.equal(c.status, 'cancelled', 'a worker still running is cancelled');
      // A call starts only while the counter is below the budget: at most ceil(budget / 18) calls
      // were recorded by the time it passed, plus one call in flight per running worker.
      const requests = mesh.model.requests.length;
      t.ok(requests <= Math.ceil(budget / TOKENS_PER_CALL) + WORKERS, `${requests} model requests`);
      t.ok(requests > Math.ceil(budget / TOKENS_PER_CALL), 'the budget was reached');

      const root = (await mesh.get(`/invocations/${res.json.id}`)).json;
      const sum = views.reduce((acc: Usage, v) => add(acc, v.usage), {
        modelCalls: 0,
        promptTokens: 0,
        completionTokens: 0,
      });
      t.same(root.treeUsage, sum, 'treeUsage is the sum of every node usage, exactly');
      t.ok(sum.modelCalls <= requests, 'no reply counted twice');
      t.ok(root.treeUsage.modelCalls > root.usage.modelCalls, "the children's usage is rolled up");
      for (const c of children) t.same(c.treeUsage, c.usage, 'a leaf has its own usage as treeUsage');
    });

    await t.test('a new invocation reports an empty treeUsage', async (t) => {
      const res = await mesh.invoke('looper', { prompt: 'go' }, 'wait=0');
      t.equal(res.status, 202);
      t.same(res.json.treeUsage, { modelCalls: 0, promptTokens: 0, completionTokens: 0 });
      await waitTerminal(mesh, res.json.id);
    });

    await t.test('maxTokens from the config applies without ?budget', async (t) => {
      const before = mesh.model.of('looper').length;
      const res = await mesh.invoke('looper', { prompt: 'go' }, 'wait=30');
      const view = await waitTerminal(mesh, res.json.id);
      t.equal(view.status, 'failed');
      t.same(view.error, {
        code: 'budget_exceeded',
        message: 'The token budget of 40 tokens for this invocation tree is exhausted.',
      });
      t.ok(mesh.model.of('looper').length - before <= Math.ceil(40 / TOKENS_PER_CALL) + 1);
    });

    await t.test("maxTokens applies to the root only: a sub-agent's own is not a cap", async (t) => {
      const alone = await mesh.invoke('small', { prompt: 'go' }, 'wait=30');
      t.equal(alone.json.error?.code, 'budget_exceeded', 'as the root, its 20 tokens cap the tree');
      const led = await mesh.invoke('lead', { prompt: 'go' }, 'wait=30');
      t.equal(led.json.status, 'succeeded', JSON.stringify(led.json.error));
      t.equal(led.json.output, 'led');
      t.equal(led.json.treeUsage.modelCalls, 2 + 4, "the child's four calls (72 tokens) ran uncapped");
    });

    await t.test('the smaller of ?budget and maxTokens wins', async (t) => {
      for (const [query, limit] of [
        ['budget=1000', 40],
        ['budget=20', 20],
      ] as const) {
        const res = await mesh.invoke('looper', { prompt: 'go' }, `wait=30&${query}`);
        const view = await waitTerminal(mesh, res.json.id);
        t.equal(view.error?.code, 'budget_exceeded', query);
        t.equal(
          view.error?.message,
          `The token budget of ${limit} tokens for this invocation tree is exhausted.`,
          query,
        );
      }
    });

    await t.test('?budget must be an integer from 1 to 1,000,000,000', async (t) => {
      for (const budget of ['0', 'abc', '-5', '1.5', '1000000001']) {
        const res = await mesh.invoke('boss', { prompt: 'go' }, `wait=0&budget=${budget}`);
        t.equal(res.status, 400, `budget=${budget}`);
        t.equal(res.json.error.code, 'invalid_input');
        t.same(
          res.json.error.details.map((d: { path: string }) => d.path),
          ['/budget'],
        );
      }
      const ok = await mesh.invoke('looper', { prompt: 'go' }, 'wait=0&budget=1000000000');
      t.equal(ok.status, 202, 'the maximum itself is accepted');
      await waitTerminal(mesh, ok.json.id);
    });
  });

  t.test('a root failed on its budget is logged and counted as failed with budget_exceeded', async (t) => {
    const mesh = await startMesh(t, {
      tools: [step],
      runners: 0,
      agentsYaml: `
  looper:
    description: Loops.
    instructions: "@agent looper"
    tools: [step]
    maxIterations: 50
`,
      script: () => ({ calls: [{ name: 'step', args: {} }] }),
    });
    const lines: Record<string, unknown>[] = [];
    const record = (level: string) => (fields: object, msg?: string) =>
      void lines.push({ level, ...fields, msg });
    const log = { info: record('info'), warn: record('warn'), error: record('error'), debug() {} };
    const runner = await addRunner(t, mesh, { log: log as unknown as RunnerOptions['log'] });
    const res = await mesh.invoke('looper', { prompt: 'go' }, 'wait=30&budget=50');
    t.equal(res.json.error?.code, 'budget_exceeded');
    const line = lines.find((l) => l.msg === 'invocation finished' && l.invocationId === res.json.id);
    t.match(
      line,
      { status: 'failed', error: { code: 'budget_exceeded' } },
      'the line says what the API says',
    );
    const counted = await runner.metrics.registry.getSingleMetricAsString('mesh_invocations_total');
    t.match(counted, 'mesh_invocations_total{agent="looper",status="failed"} 1');
    t.notMatch(counted, 'status="cancelled"');
  });
});
