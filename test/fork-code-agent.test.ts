// Forks of code agents (docs/guides/durability.md): the records before the point are replayed, `ctx.memory`
// included, steps and delegations before it never run again, a given result reaches the code (a
// step's writes made inside its fn do not, since it did not run), and a decided approval keeps its
// reason.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyLayout, rootOf } from '@agentmesh/shared';
import t from 'tap';
import { startMesh } from './support/mesh.js';

const runs = { first: 0, second: 0, after: 0 };
(globalThis as { forkRuns?: typeof runs }).forkRuns = runs;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fork-code-'));
const keeper = path.join(dir, 'keeper.mjs');
fs.writeFileSync(
  keeper,
  `export default {
  async run(input, ctx) {
    const runs = globalThis.forkRuns;
    await ctx.memory.set('seen', [input.prompt]);
    const a = await ctx.step('first', async () => {
      await ctx.memory.set('inside', 'first ran');
      return 'A' + ++runs.first;
    });
    await ctx.memory.set('seen', [...(await ctx.memory.get('seen')), a]);
    const h = await ctx.subagent('helper', { prompt: a });
    await ctx.memory.set('seen', [...(await ctx.memory.get('seen')), h.ok ? h.output : h.error.code]);
    const b = await ctx.step('second', async () => 'B' + ++runs.second);
    return { seen: await ctx.memory.get('seen'), inside: (await ctx.memory.get('inside')) ?? null, b };
  },
};
`,
);
const asker = path.join(dir, 'asker.mjs');
fs.writeFileSync(
  asker,
  `export default {
  async run(input, ctx) {
    const d = await ctx.approval('deploy', { env: 'prod' });
    const n = await ctx.step('after', () => ++globalThis.forkRuns.after);
    return d.approved ? 'deployed ' + n : 'refused: ' + (d.reason ?? '-') + ' ' + n;
  },
};
`,
);

const mesh = await startMesh(t, {
  agentsYaml: `
  keeper: {module: '${keeper}', subagents: [helper]}
  asker: {module: '${asker}'}
  helper: {description: Helps., instructions: "@agent helper"}
`,
  script: (r) => ({ final: `helped ${r.messages.find((m) => m.role === 'user')?.content} #${r.n}` }),
});

const fork = (id: string, body: unknown) =>
  mesh.request('POST', `/invocations/${id}/fork?wait=30`, { payload: body });
const raw = async (id: string) =>
  (await mesh.gateway.app.inject({ method: 'GET', url: `/invocations/${id}` })).body;

const original = (await mesh.invoke('keeper', { prompt: 'go' })).json;
t.equal(original.status, 'succeeded');
t.same(original.output, { seen: ['go', 'A1', 'helped A1 #1'], inside: 'first ran', b: 'B1' });
t.same(
  original.calls.map((c: { callId: string; name: string }) => [c.callId, c.name]),
  [
    ['t0-call0', 'step:first'],
    ['t0-call1', 'helper'],
    ['t0-call2', 'step:second'],
  ],
);

t.test(
  'a fork replays the records before its point, ctx.memory included, and runs live from it',
  async (t) => {
    const before = await raw(original.id);
    const asked = mesh.model.requests.length;
    const res = await fork(original.id, { fromCallId: 't0-call2' });
    t.equal(res.status, 200);
    t.same(res.json.output, { seen: ['go', 'A1', 'helped A1 #1'], inside: 'first ran', b: 'B2' });
    t.same(
      [runs.first, runs.second],
      [1, 2],
      'the step before the point did not run again; the one at it did',
    );
    t.equal(mesh.model.requests.length, asked, 'the delegation before it was not run again');
    t.same(
      res.json.calls.map((c: { callId: string; reused?: boolean }) => [c.callId, c.reused ?? false]),
      [
        ['t0-call0', true],
        ['t0-call1', true],
        ['t0-call2', false],
      ],
    );
    t.equal(await raw(original.id), before, 'the original is unchanged');
  },
);

t.test('a fork at a delegation runs it again, with the memory of that point', async (t) => {
  const asked = mesh.model.requests.length;
  const res = await fork(original.id, { fromCallId: 't0-call1' });
  t.equal(mesh.model.requests.length, asked + 1);
  t.same(res.json.output.seen, ['go', 'A1', `helped A1 #${asked + 1}`]);
  t.equal(runs.first, 1);
});

t.test('a delegation given a result returns it to the code, structured as given', async (t) => {
  const asked = mesh.model.requests.length;
  const res = await fork(original.id, { fromCallId: 't0-call1', result: { answer: 42 } });
  t.equal(mesh.model.requests.length, asked, 'no child ran');
  t.same(res.json.output.seen, ['go', 'A1', { answer: 42 }]);
});

t.test("a step given a result does not run, and its fn's memory writes are not replayed", async (t) => {
  const firsts = runs.first;
  const res = await fork(original.id, { fromCallId: 't0-call0', result: 'G' });
  t.equal(res.status, 200);
  t.equal(runs.first, firsts, 'the step did not run');
  t.equal(res.json.output.seen[1], 'G', 'the given result reached the code');
  t.equal(res.json.output.inside, null, 'what its fn wrote in the original run is not there');
  t.equal(res.json.output.seen[0], 'go', 'what the code wrote before it is');
});

t.test('a reused approval keeps its decision and reason', async (t) => {
  const asked = (await mesh.invoke('asker', {}, 'wait=0')).json.id;
  await mesh.waitForStatus(asked, 'waiting');
  const decided = await mesh.request('POST', `/invocations/${asked}/approvals/t0-call0`, {
    payload: { approved: false, reason: 'not today' },
  });
  t.equal(decided.status, 200);
  const done = await mesh.waitForStatus(asked, 'succeeded');
  t.equal(done.output, 'refused: not today 1');
  const res = await fork(asked, { fromCallId: 't0-call1' });
  t.equal(res.json.output, 'refused: not today 2');
  t.same(res.json.pendingApprovals, [], 'nothing waits');
  const again = await mesh.request('POST', `/invocations/${asked}/fork?wait=0`, {
    payload: { fromCallId: 't0-call0' },
  });
  const waiting = await mesh.waitForStatus(again.json.id, 'waiting');
  t.equal(waiting.pendingApprovals[0]?.name, 'deploy', 'a fork at the approval asks again');
});

t.test(
  "a reused delegation's output is copied into the fork; a child gone already cannot be reused",
  async (t) => {
    const run = (await mesh.invoke('keeper', { prompt: 'again' })).json;
    const childId = run.calls.find((c: { kind: string }) => c.kind === 'subagent').childId;
    const first = (await fork(run.id, { fromCallId: 't0-call2' })).json;
    // Gone as when the original's retention ends: the fork's copy still holds the child's output.
    await mesh.client.del(keyLayout(mesh.prefix).invocation(rootOf(childId), childId));
    const second = await fork(first.id, { fromCallId: 't0-call2' });
    t.equal(second.status, 200);
    t.equal(second.json.output.seen[2], run.output.seen[2], 'replayed from the copy');
    const late = await fork(run.id, { fromCallId: 't0-call2' });
    t.equal(late.status, 409);
    t.equal(late.json.error.code, 'call_not_recorded');
    t.match(late.json.error.message, new RegExp(`its child invocation ${childId} is gone`));
  },
);
