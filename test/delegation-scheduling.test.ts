// How delegations are scheduled across runners: siblings overlap, a parent waiting on children
// holds no worker slot, runner processes share the work. Checked by what the fake model saw
// (timestamps of requests in flight, runner ids), never by wall-clock numbers.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh, startService } from './support/mesh.js';

t.test('sibling delegations overlap: their model calls are in flight at the same time', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [a, b, c]}
  a: {instructions: "@agent a"}
  b: {instructions: "@agent b"}
  c: {instructions: "@agent c"}
`,
    script: (r) =>
      r.agent === 'parent'
        ? turnOf(r) === 0
          ? { calls: ['a', 'b', 'c'].map((x) => ({ name: `_subagent_${x}`, args: { prompt: x } })) }
          : { final: 'all done' }
        : { final: `${r.agent} done`, latencyMs: 400 },
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded');
  const children = ['a', 'b', 'c'].map((x) => mesh.model.of(x)[0]!);
  const lastArrival = Math.max(...children.map((r) => r.arrivedAt));
  const firstDone = Math.min(...children.map((r) => r.doneAt!));
  t.ok(
    lastArrival < firstDone,
    `every child call arrived before any finished (${lastArrival} < ${firstDone})`,
  );
});

t.test('a chain of five nested delegations completes on a runner of concurrency 1', async (t) => {
  const levels = ['l0', 'l1', 'l2', 'l3', 'l4', 'l5'];
  const mesh = await startMesh(t, {
    concurrency: 1,
    agentsYaml: levels
      .map(
        (l, i) => `  ${l}: {instructions: "@agent ${l}"${i < 5 ? `, subagents: [${levels[i + 1]}]` : ''}}\n`,
      )
      .join(''),
    script: (r) => {
      const i = levels.indexOf(r.agent);
      if (i === 5) return { final: 'bottom' };
      return turnOf(r) === 0
        ? { calls: [{ name: `_subagent_${levels[i + 1]}`, args: { prompt: `from ${r.agent}` } }] }
        : { final: `${r.agent}<${r.messages.at(-1)!.content}>` };
    },
  });
  const res = await mesh.invoke('l0', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded', JSON.stringify(res.json.error));
  t.equal(res.json.output, 'l0<l1<l2<l3<l4<bottom>>>>>');
});

t.test('successive delegations to one sub-agent start from nothing each time', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [child]}
  child: {instructions: "@agent child"}
`,
    script: (r) => {
      if (r.agent === 'child') return { final: `seen ${r.messages.length} messages` };
      const turn = turnOf(r);
      return turn < 2
        ? { calls: [{ name: '_subagent_child', args: { prompt: `call ${turn}` } }] }
        : { final: 'ok' };
    },
  });
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded');
  t.same(
    mesh.model.of('child').map((r) => r.messages.map((m) => m.content)),
    [
      ['@agent child', 'call 0'],
      ['@agent child', 'call 1'],
    ],
    "the second call sees neither the first call's conversation nor the parent's",
  );
});

t.test('two runner processes share the work', async (t) => {
  const mesh = await startMesh(t, {
    runners: 0,
    agentsYaml: `
  parent: {instructions: "@agent parent", subagents: [child]}
  child: {instructions: "@agent child"}
`,
    script: (r) =>
      r.agent === 'child'
        ? { final: 'child', latencyMs: 100 }
        : turnOf(r) === 0
          ? { calls: [1, 2, 3, 4].map((i) => ({ name: '_subagent_child', args: { prompt: `p${i}` } })) }
          : { final: 'parent' },
  });
  const runners = [0, 1].map(() => startService(t, 'runner', { ...mesh.env, RUNNER_CONCURRENCY: '2' }));
  const until = Date.now() + 60_000;
  // Both runners must be up before the work starts: each heartbeats into the agent's runner set.
  while ((await mesh.client.zcount(keyLayout(mesh.prefix).agentRunners('child'), Date.now(), '+inf')) < 2) {
    if (Date.now() > until || runners.some((r) => r.proc.exitCode !== null))
      t.fail(runners.map((r) => r.output()).join('\n'));
    await new Promise((r) => setTimeout(r, 200));
  }
  const results = await Promise.all([1, 2, 3].map(() => mesh.invoke('parent', { prompt: 'go' }, 'wait=60')));
  t.same(
    results.map((r) => r.json.status),
    ['succeeded', 'succeeded', 'succeeded'],
  );
  const views = await Promise.all(
    results.flatMap((r) =>
      r.json.calls
        .filter((c: { childId?: string }) => c.childId)
        .map((c: { childId: string }) => mesh.get(`/invocations/${c.childId}`)),
    ),
  );
  const byRunner = new Set(views.flatMap((v) => v.json.calls.map((c: { runner: string }) => c.runner)));
  t.equal(byRunner.size, 2, `children ran on both runner processes (${[...byRunner].join(', ')})`);
});
