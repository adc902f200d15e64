// docs/guides/approvals-and-budgets.md budgets across a runner crash (issue 11): a root delegating to four children, runners
// as real processes, the runner holding a child's model call SIGKILLed mid-tree and another one
// recovering it. (a) With a budget large enough the tree succeeds, and its treeUsage (and the
// tree's budget counter) is exactly the sum of every node's usage: the call in doubt, re-issued,
// is counted once (its usage is what was recorded, docs/architecture/durability-and-fencing.md). (b) With a budget the children
// exhaust, the root ends `failed` `budget_exceeded`, the children `cancelled`, treeUsage is still
// the exact sum, and no model call started once the counter reached the budget: Redis MONITOR
// gives the order of every counter increment and every model call's `started` record (the step
// that checks the counter), and each request the fake model received is matched to one of those
// checks, so only calls already in flight when the counter passed the budget reached the model.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { type SeenRequest, turnOf } from '../support/fake-model.js';
import { startMesh, startService, type TestMesh } from '../support/mesh.js';
import { monitorRedis } from '../support/redis-monitor.js';
import { runnerPid } from '../support/runner-pid.js';
import { waitUntil } from '../support/wait-until.js';

const WORKERS = 4;
const PROMPT_TOKENS = 11;
const COMPLETION_TOKENS = 7;
const TOKENS_PER_CALL = PROMPT_TOKENS + COMPLETION_TOKENS;
/** In run A each worker makes this many step turns, then answers. */
const A_STEP_TURNS = 3;
/** Long enough that the held model call is still open when its runner is killed. */
const HOLD_MS = 120_000;

type Usage = { modelCalls: number; promptTokens: number; completionTokens: number };
const ZERO: Usage = { modelCalls: 0, promptTokens: 0, completionTokens: 0 };
const add = (a: Usage, b: Usage): Usage => ({
  modelCalls: a.modelCalls + b.modelCalls,
  promptTokens: a.promptTokens + b.promptTokens,
  completionTokens: a.completionTokens + b.completionTokens,
});
const usageOf = (calls: number): Usage => ({
  modelCalls: calls,
  promptTokens: calls * PROMPT_TOKENS,
  completionTokens: calls * COMPLETION_TOKENS,
});

/** The user message of a request: the root's run name, or a worker's `<run> part <i>`. */
const promptOf = (r: SeenRequest) => r.messages.find((m) => m.role === 'user')?.content ?? '';

t.test('budgets stay exact across a runner SIGKILLed mid-tree', async (t) => {
  // The request (`<prompt>#<turn>`) to hold on its first arrival, and the step tool's gate.
  let hold = '';
  const held = new Set<string>();
  let reissued = () => {};
  let gate: Promise<void> = Promise.resolve();
  const step = {
    name: 'step',
    description: 'One more step.',
    input: { type: 'object' },
    run: async () => {
      await gate;
      return 'ok';
    },
  };
  const mesh = await startMesh(t, {
    runners: 0,
    tools: [step],
    agentsYaml: `
  boss: {description: Splits work., instructions: "@agent boss", subagents: [worker]}
  worker: {description: Works step by step., instructions: "@agent worker", tools: [step], maxIterations: 50}
`,
    script: (r) => {
      const prompt = promptOf(r);
      const turn = turnOf(r);
      if (r.agent === 'boss') {
        if (turn > 0) return { final: 'done' };
        const calls = Array.from({ length: WORKERS }, (_, i) => ({
          name: '_subagent_worker',
          args: { prompt: `${prompt} part ${i}` },
        }));
        return { calls };
      }
      const key = `${prompt}#${turn}`;
      if (key === hold && !held.has(key)) {
        held.add(key);
        return { calls: [{ name: 'step', args: {} }], latencyMs: HOLD_MS };
      }
      if (key === hold) reissued();
      if (prompt.startsWith('A ') && turn >= A_STEP_TURNS) return { final: `answer of ${prompt}` };
      return { calls: [{ name: 'step', args: {} }] };
    },
  });
  const keys = keyLayout(mesh.prefix);
  // Three runner processes: one is killed in each run, and one always survives to recover.
  const runners = [0, 1, 2].map(() => startService(t, 'runner', mesh.env));
  await waitUntil(
    async () => (await mesh.client.zcount(keys.agentRunners('worker'), Date.now(), '+inf')) === 3,
    90_000,
    () => runners.map((r) => r.output()).join('\n'),
  );

  /** Waits for the held request, SIGKILLs the runner whose `started` record it follows. */
  async function killHolder(rootId: string, prompt: string, turn: number) {
    await waitUntil(
      async () => mesh.model.requests.some((r) => `${promptOf(r)}#${turnOf(r)}` === `${prompt}#${turn}`),
      30_000,
      () => `the held model call of ${prompt}`,
    );
    const nodes = await nodesOf(mesh, rootId);
    const childId = [...nodes].find(([, p]) => p === prompt)![0];
    const call = await waitUntil(
      async () =>
        (await mesh.get(`/invocations/${childId}`)).json?.calls?.find(
          (c: any) => c.callId === `t${turn}-model` && c.status === 'started' && c.runner,
        ),
      30_000,
      () => `t${turn}-model of ${childId} started`,
    );
    // Every request open now may die with the runner: each is at most one extra request.
    const open = mesh.model.requests.filter((r) => r.doneAt === undefined && !r.aborted).length;
    process.kill(runnerPid(call.runner), 'SIGKILL');
    return { childId, open };
  }

  await t.test(
    '(a) a large budget: succeeds, treeUsage is the exact sum, the call in doubt counted once',
    async (t) => {
      const before = mesh.model.requests.length;
      hold = 'A part 0#1';
      const started = await mesh.invoke('boss', { prompt: 'A' }, 'wait=0&budget=1000000');
      t.equal(started.status, 202, JSON.stringify(started.json));
      const rootId = started.json.id;
      await killHolder(rootId, 'A part 0', 1);
      const done = await mesh.waitForStatus(rootId, 'succeeded', 120_000, () =>
        runners.map((r) => r.output()).join('\n'),
      );
      t.equal(done.output, 'done');

      const views = await finishedTree(mesh, rootId);
      t.equal(views.length, 1 + WORKERS);
      for (const v of views) t.equal(v.status, 'succeeded', `${v.agent} ${v.input.prompt} succeeded`);
      const requests = mesh.model.requests.slice(before);
      const heldRequest = requests.find((r) => `${promptOf(r)}#${turnOf(r)}` === 'A part 0#1')!;
      t.ok(heldRequest.aborted, 'the held call died with its runner');
      t.equal(
        requests.filter((r) => `${promptOf(r)}#${turnOf(r)}` === 'A part 0#1').length,
        2,
        'the call in doubt was re-issued once',
      );

      // Each node counts each of its model calls once, however many requests reached the model.
      for (const v of views) {
        const turns = new Set(requests.filter((r) => promptOf(r) === v.input.prompt).map(turnOf));
        const expected = v.agent === 'boss' ? 2 : A_STEP_TURNS + 1;
        t.equal(turns.size, expected, `${v.input.prompt}: ${expected} turns`);
        t.same(v.usage, usageOf(expected), `${v.input.prompt}: each model call counted once`);
      }
      const root = views[0];
      const sum = views.reduce((acc: Usage, v) => add(acc, v.usage), ZERO);
      t.same(root.treeUsage, sum, 'treeUsage is the sum of every node usage, exactly');
      t.same(sum, usageOf(2 + WORKERS * (A_STEP_TURNS + 1)), 'every distinct call, once');
      t.ok(requests.length > sum.modelCalls, 'more requests than counted calls: the re-issue');
      const counter = Number(await mesh.client.hget(keys.invocation(rootId, rootId), 'budgetUsed'));
      t.equal(counter, sum.promptTokens + sum.completionTokens, 'the budget counter counts each call once');
    },
  );

  await t.test(
    '(b) a budget the children exhaust: budget_exceeded, no call started past it, exact treeUsage',
    async (t) => {
      const budget = 200;
      const crossAt = Math.ceil(budget / TOKENS_PER_CALL);
      const before = mesh.model.requests.length;
      // Redis executes steps one at a time; MONITOR lists each command (those inside Lua too) in that order.
      const monitor = await monitorRedis(mesh.redis.port);
      t.teardown(() => monitor.stop());
      const log = () => monitor.seen.map(({ args }) => args);
      // The workers wait in their first step until the call in doubt is re-issued: the crash and the
      // recovery both happen before the budget is spent, and the re-issued call counts towards it.
      gate = new Promise((r) => (reissued = r));
      hold = 'B part 0#0';
      const started = await mesh.invoke('boss', { prompt: 'B' }, `wait=0&budget=${budget}`);
      t.equal(started.status, 202, JSON.stringify(started.json));
      const rootId = started.json.id;
      const killed = await killHolder(rootId, 'B part 0', 0);

      const root = await mesh.waitForStatus(rootId, 'failed', 120_000, () =>
        runners.map((r) => r.output()).join('\n'),
      );
      t.same(root.error, {
        code: 'budget_exceeded',
        message: `The token budget of ${budget} tokens for this invocation tree is exhausted.`,
      });
      const views = await finishedTree(mesh, rootId);
      const children = views.slice(1);
      t.equal(children.length, WORKERS);
      for (const c of children)
        t.equal(c.status, 'cancelled', `${c.input.prompt} was still running: cancelled`);

      // treeUsage: every recorded model call of the tree, cancelled nodes included, each once.
      const last = (await mesh.get(`/invocations/${rootId}`)).json;
      const sum = views.reduce((acc: Usage, v) => add(acc, v.usage), ZERO);
      t.same(last.treeUsage, sum, 'treeUsage is the sum of every node usage, exactly');
      for (const v of views) {
        const recorded = v.calls.filter((c: any) => c.kind === 'model' && c.status === 'succeeded').length;
        t.same(v.usage, usageOf(recorded), `${v.input.prompt}: usage = its recorded model calls`);
      }
      const counter = Number(await mesh.client.hget(keys.invocation(rootId, rootId), 'budgetUsed'));
      t.equal(counter, sum.promptTokens + sum.completionTokens, 'the budget counter counts each call once');
      t.ok(counter >= budget, 'the counter reached the budget');

      // The order in Redis: the counter after each increment, and each model call's `started` record.
      const rootKey = keys.invocation(rootId, rootId);
      const isIncrement = (args: string[]) =>
        args[0]?.toLowerCase() === 'hincrby' && args[1] === rootKey && args[2] === 'budgetUsed';
      // MONITOR lines arrive on their own connection: wait until every increment is in.
      await waitUntil(
        async () =>
          log()
            .filter(isIncrement)
            .reduce((n, args) => n + Number(args[3]), 0) === counter,
        10_000,
        () => 'MONITOR to show every increment of the counter',
      );
      const nodes = await nodesOf(mesh, rootId);
      const callsKeys = new Map([...nodes.keys()].map((id) => [keys.calls(rootId, id), id]));
      let used = 0;
      let crossed = -1;
      const starts: { node: string; callId: string; used: number; i: number }[] = [];
      log().forEach((args, i) => {
        const [command = '', key = '', field = '', value = ''] = args;
        if (isIncrement(args)) {
          used += Number(value);
          if (used >= budget && crossed < 0) crossed = i;
        }
        if (command.toLowerCase() === 'hset' && callsKeys.has(key) && /^t\d+-model$/.test(field)) {
          if (value.includes('"status":"started"'))
            starts.push({ node: callsKeys.get(key)!, callId: field, used, i });
        }
      });
      t.equal(used, counter, 'MONITOR saw every increment of the counter');
      t.ok(crossed >= 0, 'MONITOR saw the counter pass the budget');
      t.same(
        starts.filter((s) => s.i > crossed),
        [],
        'no model call started after the counter passed the budget',
      );
      for (const s of starts)
        t.ok(s.used < budget, `${s.callId} of ${nodes.get(s.node)} started below the budget`);

      // Each request the model received follows one of those checks, all before the counter passed.
      const requests = mesh.model.requests.slice(before);
      const idOf = new Map([...nodes].map(([id, prompt]) => [prompt, id]));
      const byCall = new Map<string, number>();
      for (const r of requests) {
        const call = `${idOf.get(promptOf(r))}/t${turnOf(r)}-model`;
        byCall.set(call, (byCall.get(call) ?? 0) + 1);
      }
      for (const [call, n] of byCall) {
        const checks = starts.filter((s) => `${s.node}/${s.callId}` === call).length;
        t.ok(n <= checks, `${call}: ${n} request(s), ${checks} started record(s) below the budget`);
      }
      const heldCalls = requests.filter((r) => `${promptOf(r)}#${turnOf(r)}` === 'B part 0#0');
      t.ok(heldCalls[0]?.aborted, 'the held call died with its runner');
      t.equal(heldCalls.length, 2, 'the call in doubt was re-issued once, below the budget');
      // Calls recorded when the counter passed, plus at most one in flight per worker, plus those the
      // crash left in doubt.
      t.ok(
        requests.length <= crossAt + WORKERS + killed.open,
        `${requests.length} model requests for a budget of ${crossAt} calls`,
      );
      t.ok(sum.modelCalls >= crossAt, 'the recorded calls reached the budget');
    },
  );
});

/** Every node of the tree under `rootId` with its prompt (the root's `A`/`B`, a worker's `… part i`). */
async function nodesOf(mesh: TestMesh, rootId: string): Promise<Map<string, string>> {
  const nodes = new Map<string, string>();
  for (const queue = [rootId]; queue.length > 0; ) {
    const view = (await mesh.get(`/invocations/${queue.shift()}`)).json;
    nodes.set(view.id, view.input.prompt);
    for (const c of view.calls) if (c.childId) queue.push(c.childId);
  }
  return nodes;
}

/** Every view of the tree under `id` once all of them are terminal, the root first. */
async function finishedTree(mesh: TestMesh, id: string): Promise<any[]> {
  const views: any[] = [];
  for (const queue = [id]; queue.length > 0; ) {
    const next = queue.shift()!;
    const view = await waitUntil(
      async () => {
        const v = (await mesh.get(`/invocations/${next}`)).json;
        return ['succeeded', 'failed', 'cancelled'].includes(v?.status) ? v : undefined;
      },
      60_000,
      () => `${next} to be terminal`,
    );
    views.push(view);
    for (const c of view.calls) if (c.childId) queue.push(c.childId);
  }
  return views;
}
