// Every mesh Lua step touches only keys passed in its KEYS (docs/guides/deploying.md: what lets a step run
// on one Redis Cluster slot and what the cluster's routing sees). Redis MONITOR records each script
// call and the commands it ran; Redis itself (COMMAND GETKEYS) says which arguments of those are
// keys. The steps are listed from the .lua files (docs/architecture/durability-and-fencing.md:
// the mesh's, the model limiter's, the tool-host's, the fast path's), so a new file is covered as it
// lands: the flows below run every step but those NOT_RUN names, and each fast path file's header
// is found in a step that ran. BullMQ's own scripts are not ours. The mesh runs first without the
// queue fast path (MESH_QUEUE_FASTPATH=off), as on a cluster; then with it, on one server, where
// ACTIVATE runs inside BullMQ's take of the job and a child's job is added behind a guard that reads
// the parent's epoch (queue/fast-path): those steps touch the tree's keys without naming them,
// which only one server allows, so theirs are checked to be keys of this mesh only. That every .lua
// file compiles is test/lua-files.test.ts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyLayout } from '@agentmesh/shared';
import t, { type Test } from 'tap';
import { turnOf } from './support/fake-model.js';
import { FAST_PATH, FAST_STEPS, header, PLAIN, sha1 } from './support/lua-steps.js';
import { type MeshOptions, startMesh, type TestMesh } from './support/mesh.js';
import { monitorRedis } from './support/redis-monitor.js';
import { waitUntil } from './support/wait-until.js';

// A code agent whose memory write comes before its delegation: committed on its own (COMMIT_MEMORY).
const keeper = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'lua-keys-')), 'keeper.mjs');
fs.writeFileSync(
  keeper,
  `export default {
  async run(input, ctx) {
    await ctx.memory.set('asked', input.prompt);
    const res = await ctx.subagent('researcher', { prompt: 'x' });
    return res.ok ? res.output : res.error.code;
  },
};
`,
);
const AGENTS = `
  boss: {instructions: "@agent boss", tools: [charge, lookup], subagents: [helper]}
  helper: {instructions: "@agent helper"}
  keeper: {module: '${keeper}', subagents: [researcher]}
  researcher: {description: Researches., instructions: "@agent researcher"}
`;

/** One script call seen by MONITOR: its KEYS and the commands it ran. */
interface ScriptCall {
  sha: string;
  keys: string[];
  inner: string[][];
}

/**
 * The plain steps the flows do not run: a code agent redeployed mid-run (it touches KEYS[1] and
 * KEYS[2] only), a tool call aborted, and one that runs past a third of its lease.
 */
const NOT_RUN = ['discard-calls', 'outcome-abandon', 'outcome-renew'];

/** The plain steps' texts by name, and their names by the hash Redis knows them by. */
const TEXTS = new Map(PLAIN.flatMap(([, lua]) => lua.names().map((name) => [name, lua.text(name)])));
const STEPS = new Map([...TEXTS].map(([name, lua]) => [sha1(lua), name]));

const FAST = new Map(Object.entries(FAST_STEPS).map(([name, lua]) => [sha1(lua), name]));

const meshOptions = (queueFastPath: boolean): MeshOptions => ({
  agentsYaml: AGENTS,
  queueFastPath,
  modelOptions: ', maxConcurrency: 4',
  tools: [
    {
      name: 'charge',
      description: 'Charges.',
      input: { type: 'object' },
      needsApproval: true,
      run: async () => 'charged',
    },
    { name: 'lookup', description: 'Looks up.', input: { type: 'object' }, run: async () => 'found' },
  ],
  script: (r) => {
    const prompt = r.messages.find((m) => m.role === 'user')?.content;
    if (r.agent === 'boss' && turnOf(r) === 0) {
      if (prompt === 'hold') return { calls: [{ name: '_subagent_helper', args: { prompt: 'slow' } }] };
      return {
        calls: [
          { name: 'charge', args: {} },
          { name: 'lookup', args: {} },
          { name: '_subagent_helper', args: { prompt: 'x' } },
        ],
      };
    }
    if (r.agent === 'helper' && prompt === 'slow') return { final: 'late', latencyMs: 10_000 };
    if (r.agent === 'helper' && prompt === 'pause') return { final: 'paused', latencyMs: 1500 };
    return { final: `${r.agent} done` };
  },
});

/**
 * Runs the flows that reach every step, and returns the script calls MONITOR saw, once it saw one
 * of `awaited` too (a step on a timer of its own).
 */
async function runFlows(t: Test, mesh: TestMesh, awaited?: string): Promise<ScriptCall[]> {
  const monitor = await monitorRedis(Number(new URL(mesh.env.REDIS_URL!).port));
  t.teardown(() => monitor.stop());
  // Delegation, a tool, an approval asked and decided, the finish of both.
  const asked = (await mesh.invoke('boss', { prompt: 'go' }, 'wait=0')).json.id;
  await mesh.waitForStatus(asked, 'waiting');
  await mesh.request('POST', `/invocations/${asked}/approvals/t0-call0`, { payload: { approved: true } });
  await mesh.waitForStatus(asked, 'succeeded');
  // A fork of it (docs/guides/durability.md): the node read within bounds, the fork made with its reused records.
  const forked = await mesh.request('POST', `/invocations/${asked}/fork?wait=30`, {
    payload: { fromCallId: 't1-model' },
  });
  t.equal(forked.json.status, 'succeeded');
  // A code agent's memory, its park and replay.
  t.equal((await mesh.invoke('keeper', { prompt: 'go' })).status, 200);
  // A tree cancelled while its child runs.
  const held = (await mesh.invoke('boss', { prompt: 'hold' }, 'wait=0')).json.id;
  await waitUntil(
    async () => mesh.model.of('helper').some((r) => r.doneAt === undefined),
    20_000,
    () => "the child's model call",
  );
  t.equal((await mesh.request('DELETE', `/invocations/${held}`)).status, 202);
  await mesh.waitForStatus(held, 'cancelled');
  // A tree that fails on its budget (its child's call finds the counter spent).
  const broke = (await mesh.invoke('boss', { prompt: 'go' }, 'wait=0&budget=1')).json.id;
  await mesh.waitForStatus(broke, 'failed');
  // A session's turns (one queued behind another: its history is read when its turn comes), a
  // page of its messages, and its deletion.
  await mesh.invoke('helper', { prompt: 'one' }, 'session=s1');
  await mesh.invoke('helper', { prompt: 'pause' }, 'wait=0&session=s1');
  const queued = (await mesh.invoke('helper', { prompt: 'two' }, 'wait=0&session=s1')).json.id;
  await mesh.waitForStatus(queued, 'succeeded');
  t.equal((await mesh.get('/sessions/s1?limit=2')).status, 200);
  t.equal((await mesh.request('DELETE', '/sessions/s1')).status, 204);
  t.equal((await mesh.get('/invocations?limit=5')).status, 200);
  if (awaited) {
    // EVALSHA names it by its hash, EVAL sends its text.
    const sha = sha1(awaited);
    const ran = (args: string[]) => args[1] === sha || sha1(args[1] ?? '', 'latin1') === sha;
    await waitUntil(
      async () => monitor.seen.some((c) => ran(c.args)),
      20_000,
      () => 'the awaited step',
    );
  }
  await new Promise((r) => setTimeout(r, 200)); // the last steps reach MONITOR
  monitor.stop();
  const calls: ScriptCall[] = [];
  for (const { source, args } of monitor.seen) {
    const command = args[0]!.toLowerCase();
    if (source === 'lua') calls.at(-1)?.inner.push(args);
    else if (command === 'evalsha' || command === 'eval') {
      // MONITOR's text is one char per byte (latin1): the bytes sent, hashed as Redis does.
      const sha = command === 'eval' ? sha1(args[1]!, 'latin1') : args[1]!;
      calls.push({ sha, keys: args.slice(3, 3 + Number(args[2])), inner: [] });
    } else calls.push({ sha: '', keys: [], inner: [] }); // a script's commands follow it at once
  }
  return calls;
}

/** The keys `call`'s commands touched (Redis's COMMAND GETKEYS) that `allowed` refuses. */
async function strays(mesh: TestMesh, name: string, call: ScriptCall, allowed: (key: string) => boolean) {
  const out: string[] = [];
  for (const command of call.inner) {
    const used = (await mesh.client.call('COMMAND', 'GETKEYS', ...command).catch(() => [])) as string[];
    for (const key of used) if (!allowed(key)) out.push(`${name}: ${command[0]} ${key}`);
  }
  return out;
}

/** The fast path's .lua files whose header is in none of the texts of the steps that ran. */
function uncovered(ran: string[]): string[] {
  return FAST_PATH.flatMap(([dir, lua]) =>
    lua
      .names()
      .filter((name) => !ran.some((text) => text.includes(header(lua, name))))
      .map((name) => `${dir}/${name}.lua`),
  );
}

t.test('every mesh Lua step touches only the keys in its KEYS', async (t) => {
  const mesh = await startMesh(t, meshOptions(false));
  const calls = await runFlows(t, mesh);
  const ours = calls.filter((c) => STEPS.has(c.sha));
  const ran = new Set(ours.map((c) => STEPS.get(c.sha)!));
  t.same(
    [...TEXTS.keys()].filter((n) => !ran.has(n)),
    NOT_RUN,
    'the flows ran every step of the mesh, the tool-host and the model limiter but those they cannot',
  );
  const found: string[] = [];
  for (const call of ours)
    found.push(...(await strays(mesh, STEPS.get(call.sha)!, call, (k) => call.keys.includes(k))));
  t.same(found, [], 'no step touched a key it was not given');
  t.ok(ours.length > 20, `${ours.length} script calls checked`);
});

t.test(
  "with the queue fast path, the mesh's Lua in BullMQ's steps touches this mesh's keys only",
  async (t) => {
    const mesh = await startMesh(t, meshOptions(true));
    const layout = keyLayout(mesh.prefix);
    // The gone-runner watch takes its lease once Redis has been up a while (gone-runners.ts).
    const calls = await runFlows(t, mesh, FAST_STEPS['gone-runner-lease']);
    const ran = new Set(calls.map((c) => FAST.get(c.sha) ?? STEPS.get(c.sha)).filter((n) => n !== undefined));
    t.same(
      Object.keys(FAST_STEPS).filter((n) => !ran.has(n)),
      // A runner gone (test/faults/runner-crash.test.ts), and a watch that stops after the flows.
      ['gone-runner-release', 'reclaim-gone'],
      'the flows ran every fast path step but the gone-runner ones',
    );
    const texts = [...ran].map((n) => FAST_STEPS[n] ?? TEXTS.get(n)!);
    texts.push(FAST_STEPS['gone-runner-release']!, FAST_STEPS['reclaim-gone']!);
    t.same(uncovered(texts), [], "each of the fast path's .lua files is in a step");
    const found: string[] = [];
    for (const call of calls) {
      const strict = STEPS.get(call.sha);
      const fast = FAST.get(call.sha);
      if (strict) found.push(...(await strays(mesh, strict, call, (k) => call.keys.includes(k))));
      else if (fast) {
        const mine = (k: string) =>
          call.keys.includes(k) || k.startsWith(`${layout.prefix}:`) || k.startsWith(layout.bullPrefix);
        found.push(...(await strays(mesh, fast, call, mine)));
      }
    }
    t.same(found, [], "no step touched a key outside this mesh's layout, nor a plain step one not given");
  },
);
