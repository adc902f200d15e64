// The hot path's Redis work, counted (docs/performance.md is measured by the bench; these pin the counts that
// make it): which Lua steps one run sends, and who is woken on the done channel. BullMQ's own steps
// (add, take, complete) are not counted: the take carries ACTIVATE on one server (take-activation).
import { createHash } from 'node:crypto';
import { keyLayout } from '@agentmesh/shared';
import * as lua from '@agentmesh/shared/redis';
import { DONE_MESSAGE_MAX_BYTES } from '@agentmesh/shared/redis';
import t, { type Test } from 'tap';
import { turnOf } from './support/fake-model.js';
import { pinQueueFastPath, startMesh, type TestMesh } from './support/mesh.js';
import { monitorRedis } from './support/redis-monitor.js';

// The counts are the queue fast path's (docs/architecture/queue-fast-path.md), in either run mode.
pinQueueFastPath();

const agentsYaml = `
  solo:
    description: Answers.
    instructions: "@agent solo"
  parent:
    description: Delegates.
    instructions: "@agent parent"
    subagents: [child]
  child:
    description: Answers a part.
    instructions: "@agent child"
`;

const BIG = 'x'.repeat(DONE_MESSAGE_MAX_BYTES);

const script = (r: { agent: string; messages: unknown[] }) => {
  if (r.agent === 'parent' && turnOf(r as never) === 0)
    return { calls: [{ name: '_subagent_child', args: { prompt: 'part' } }] };
  const big = JSON.stringify(r.messages).includes('big');
  return { final: big ? BIG : `${r.agent} answer` };
};

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');
const names = new Map(
  Object.entries(lua)
    .filter(([, v]) => typeof v === 'object' && v !== null && 'lua' in v)
    .map(([name, v]) => [sha1((v as lua.LuaScript).lua), name]),
);

/**
 * The mesh's Lua steps by name, in the order Redis runs them, from now until the test ends. MONITOR
 * on a raw socket (support/redis-monitor): ioredis's own monitor() takes a monitored line arriving
 * in the same read as MONITOR's reply for a reply, and fails with "Command queue state error".
 */
async function watchSteps(t: Test, mesh: TestMesh): Promise<{ steps(): string[] }> {
  const monitor = await monitorRedis(mesh.redis.port);
  t.teardown(() => monitor.stop());
  return {
    steps: () =>
      monitor.seen.flatMap(({ args }) => {
        // EVALSHA names the script by its hash; EVAL (a script's first run on this server) sends it whole.
        const command = args[0]!.toLowerCase();
        const sha = command === 'evalsha' ? args[1]! : command === 'eval' ? sha1(args[1]!) : undefined;
        const name = sha === undefined ? undefined : names.get(sha);
        return name ? [name] : [];
      }),
  };
}

t.test(
  'one single-agent run sends one Lua step per state change, the model reply riding with the finish',
  async (t) => {
    const mesh = await startMesh(t, { agentsYaml, script });
    await mesh.invoke('solo', { prompt: 'warm up' }); // scripts are loaded (EVAL) once per connection
    const watch = await watchSteps(t, mesh);
    const res = await mesh.invoke('solo', { prompt: 'go' });
    t.equal(res.json.status, 'succeeded');
    await new Promise((r) => setTimeout(r, 100));
    t.strictSame(watch.steps(), [
      'CREATE_INVOCATION', // listing the root as recent in the same step
      // No ACTIVATE: it ran inside BullMQ's take of the job, with the model call's `started` record.
      'FINISH',
      // No READ_INVOCATION: the done message carried the finished invocation.
    ]);
    const inv = await mesh.client.hgetall(keyLayout(mesh.prefix).invocation(res.json.id, res.json.id));
    t.equal(inv.epoch, '1', 'activated once, by the take');
    t.match(inv.startedAt, /^\d+$/);
    t.match(res.json.calls, [{ callId: 't0-model', kind: 'model', status: 'succeeded' }]);
    t.equal(res.json.usage.modelCalls, 1, 'the reply was recorded, with its usage, by the finish');
  },
);

t.test(
  'a delegation run writes no model call started apart: each rides with the activation making it',
  async (t) => {
    const mesh = await startMesh(t, { agentsYaml, script });
    await mesh.invoke('parent', { prompt: 'warm up' });
    const watch = await watchSteps(t, mesh);
    const res = await mesh.invoke('parent', { prompt: 'go' });
    t.equal(res.json.output, 'parent answer');
    await new Promise((r) => setTimeout(r, 100));
    const steps = watch.steps();
    const count = (name: string) => steps.filter((s) => s === name).length;
    t.equal(count('ACTIVATE'), 0, 'the parent, the child, the parent resumed: each in the take of its job');
    // No model call's `started` goes alone: each rides with its ACTIVATE (the child's too, its
    // parent having checked its input). A reply rides with the write after it: inside FINISH, or
    // as the one RECORD_CALL left, the parent's first reply, in the round trip of its delegations.
    t.equal(count('RECORD_CALL'), 1, steps.join(' '));
    t.match(res.json.calls, [
      { callId: 't0-model', status: 'succeeded' },
      { kind: 'subagent', status: 'succeeded' },
      { callId: 't1-model', status: 'succeeded' },
    ]);
  },
);

t.test('a waiter reads an invocation too large for the done message', async (t) => {
  const mesh = await startMesh(t, { agentsYaml, script });
  await mesh.invoke('solo', { prompt: 'warm up' });
  const watch = await watchSteps(t, mesh);
  const res = await mesh.invoke('solo', { prompt: 'big' });
  t.equal(res.json.output, BIG, 'the whole output');
  await new Promise((r) => setTimeout(r, 100));
  t.equal(watch.steps().at(-1), 'READ_INVOCATION', 'read once it was announced without it');
});

t.test("a delegation's end wakes no gateway: only the root is published on the done channel", async (t) => {
  const mesh = await startMesh(t, { agentsYaml, script });
  const subscriber = mesh.client.duplicate();
  t.teardown(() => subscriber.disconnect());
  const published: string[] = [];
  subscriber.on('message', (_channel: string, message: string) => published.push(message.split('\n')[0]!));
  await subscriber.subscribe(keyLayout(mesh.prefix).doneChannel());
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.equal(res.json.output, 'parent answer');
  t.equal(res.json.calls[1]?.status, 'succeeded', 'the child finished');
  await new Promise((r) => setTimeout(r, 100));
  t.strictSame(published, [res.json.id]);
});

t.test('an unwatched run asks nobody whether it is watched: its activation read the watch key', async (t) => {
  const mesh = await startMesh(t, { agentsYaml, script });
  await mesh.invoke('parent', { prompt: 'warm up' });
  const monitor = await monitorRedis(mesh.redis.port);
  t.teardown(() => monitor.stop());
  const res = await mesh.invoke('parent', { prompt: 'go' });
  t.equal(res.json.output, 'parent answer');
  await new Promise((r) => setTimeout(r, 100));
  const asked: string[] = [];
  const inLua: string[] = [];
  for (const { args, source } of monitor.seen) {
    if (args[0]!.toLowerCase() !== 'exists' || !args.some((a) => a.endsWith(':watch'))) continue;
    (source === 'lua' ? inLua : asked).push(args.join(' '));
  }
  t.strictSame(asked, [], 'no EXISTS of the watch key of its own: three activations, three model calls');
  t.equal(inLua.length, 3, 'each activation read it, inside its take');
});
