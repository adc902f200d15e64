// Every Lua step of the mesh touches only keys passed in its KEYS (docs/guides/deploying.md: what lets a step run
// on one Redis Cluster slot and what the cluster's routing sees). Redis MONITOR records each script
// call and the commands it ran; Redis itself (COMMAND GETKEYS) says which arguments of those are
// keys. The flows below run every step but DISCARD_CALLS (a code agent redeployed mid-run; it
// touches KEYS[1] and KEYS[2] only). BullMQ's own scripts (keys under its prefix) are not ours.
// The mesh runs without the queue fast path (MESH_QUEUE_FASTPATH=off), as on a cluster: with it,
// on one server, ACTIVATE runs inside BullMQ's take of the job and a child's job is added behind a
// guard that reads the parent's epoch (queue/fast-path), steps that touch the tree's keys without
// naming them, which only one server allows.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyLayout } from '@agentmesh/shared';
import * as shared from '@agentmesh/shared/redis';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';
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
  /** BullMQ's (or no script): not checked. */
  bull: boolean;
}

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

t.test('every mesh Lua step touches only the keys in its KEYS', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml: AGENTS,
    queueFastPath: false,
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
  const bull = keyLayout(mesh.prefix).bullPrefix;
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
  await new Promise((r) => setTimeout(r, 200)); // the last steps reach MONITOR
  monitor.stop();
  const calls: ScriptCall[] = [];
  for (const { source, args } of monitor.seen) {
    const command = args[0]!.toLowerCase();
    if (source === 'lua') calls.at(-1)?.inner.push(args);
    else if (command === 'evalsha' || command === 'eval') {
      const keys = args.slice(3, 3 + Number(args[2]));
      calls.push({
        sha: command === 'eval' ? sha1(args[1]!) : args[1]!,
        keys,
        inner: [],
        bull: !!keys[0]?.startsWith(bull),
      });
    } else calls.push({ sha: '', keys: [], inner: [], bull: true }); // a script's commands follow it at once
  }

  const scripts = Object.entries(shared).filter(
    (e): e is [string, shared.LuaScript] => typeof (e[1] as shared.LuaScript)?.lua === 'string',
  );
  const names = new Map(scripts.map(([name, s]) => [sha1(s.lua), name]));
  const ours = calls.filter((c) => !c.bull);
  const seen = new Set(ours.map((c) => names.get(c.sha) ?? `other ${c.sha.slice(0, 8)}`));
  t.same(
    [...names.values()].filter((n) => !seen.has(n)),
    ['DISCARD_CALLS'],
    'the flows ran every step but DISCARD_CALLS',
  );
  t.ok(
    [...seen].some((n) => n.startsWith('other')),
    "the tool-host's and the model limiter's scripts ran too",
  );
  const strays: string[] = [];
  for (const call of ours) {
    for (const command of call.inner) {
      const used = (await mesh.client.call('COMMAND', 'GETKEYS', ...command).catch(() => [])) as string[];
      for (const key of used) {
        if (!call.keys.includes(key)) strays.push(`${names.get(call.sha) ?? call.sha}: ${command[0]} ${key}`);
      }
    }
  }
  t.same(strays, [], 'no step touched a key it was not given');
  t.ok(ours.length > 20, `${ours.length} script calls checked`);
});
