// docs/guides/approvals-and-budgets.md Budgets: `?budget=` and `maxTokens` cap the tokens of a whole invocation tree; one
// counter per tree, `budget_exceeded` failing the root with its descendants cancelled, and
// `treeUsage` rolled up exactly once. The fake model answers every request with 11 + 7 tokens.

import type { RunnerOptions } from '@agentmesh/agent-runner';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { addRunner, startMesh, type TestMesh } from './support/mesh.js';

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
  t.match(line, { status: 'failed', error: { code: 'budget_exceeded' } }, 'the line says what the API says');
  const counted = await runner.metrics.registry.getSingleMetricAsString('mesh_invocations_total');
  t.match(counted, 'mesh_invocations_total{agent="looper",status="failed"} 1');
  t.notMatch(counted, 'status="cancelled"');
});
