// ActivationStore against a real Redis: a deferred record (a model reply) leaves with the
// activation's next write, in the same round trip, and is never written by a fenced-out activation.
import { type CallRecord, keyLayout } from '@agentmesh/shared';
import { meshScripts } from '@agentmesh/shared/redis';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { createRootInvocation } from '@agentmesh/test-support/root-invocation';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { ActivationStore, FencedOutError } from '../src/loop/store/activation-store.js';

const keys = keyLayout('storetest');
let n = 0;

async function setup(t: Test) {
  const server = await startRedis();
  const redis = new Redis(server.url, { maxRetriesPerRequest: null });
  t.teardown(async () => {
    redis.disconnect();
    await server.stop();
  });
  const scripts = meshScripts(redis);
  const store = new ActivationStore(redis, scripts, keys, 3600);
  const create = async (extra: { deadline?: number; budget?: number } = {}) => {
    const id = `inv_${String(++n).padStart(32, '0')}`;
    await createRootInvocation(scripts, keys, id, extra);
    return id;
  };
  // Each event as `type` or `type:status`.
  const eventTypes = async (id: string) =>
    (await redis.xrange(keys.events(id), '-', '+')).map(([, fields]) => {
      const e = JSON.parse(fields[1]!) as { type: string; data?: { status?: string } };
      return e.data?.status ? `${e.type}:${e.data.status}` : e.type;
    });
  return { redis, store, create, eventTypes };
}

const reply = (callId: string): CallRecord => ({
  v: 1,
  callId,
  kind: 'model',
  name: 'default',
  status: 'succeeded',
  startedAt: new Date().toISOString(),
  finishedAt: new Date().toISOString(),
  reply: { content: 'hi', toolCalls: [], usage: { promptTokens: 3, completionTokens: 2 } },
});
const modelEvent = { type: 'model_call' as const, data: { callId: 't0-model' } };
const usage = { modelCalls: 1, promptTokens: 3, completionTokens: 2 };

t.test('a deferred model reply is written by the finish, in the same step, before its events', async (t) => {
  const { redis, store, create, eventTypes } = await setup(t);
  const id = await create();
  const a = (await store.activate(id, id, 'r1'))!;
  await store.record(a, reply('t0-model'), modelEvent, usage, [], { defer: true });
  t.equal(await redis.hget(keys.calls(id, id), 't0-model'), null, 'nothing is sent yet');
  t.ok(a.records.has('t0-model'), 'the activation sees its own reply at once');
  const outcome = { status: 'succeeded', output: 'hi', content: 'hi' } as const;
  t.strictSame(await store.finish(a.state, a.epoch, outcome, a), outcome, 'the end as written');
  t.match(JSON.parse((await redis.hget(keys.calls(id, id), 't0-model'))!), { status: 'succeeded' });
  t.strictSame(await redis.hmget(keys.invocation(id, id), 'status', 'modelCalls', 'promptTokens'), [
    'succeeded',
    '1',
    '3',
  ]);
  t.strictSame(await eventTypes(id), [
    'status:queued',
    'status:running',
    'model_call',
    'output:succeeded',
    'status:succeeded',
  ]);
});

t.test("a deferred reply goes out ahead of the next call's started record", async (t) => {
  const { redis, store, create, eventTypes } = await setup(t);
  const id = await create();
  const a = (await store.activate(id, id, 'r1'))!;
  await store.record(a, reply('t0-model'), modelEvent, usage, [], { defer: true });
  await store.record(a, { ...reply('t1-model'), status: 'started', callId: 't1-model' });
  t.strictSame((await redis.hkeys(keys.calls(id, id))).sort(), ['t0-model', 't1-model']);
  t.strictSame(await eventTypes(id), ['status:queued', 'status:running', 'model_call']);
  t.strictSame(a.pending, [], 'nothing is left pending');
});

t.test('an activation that was taken over writes neither its deferred reply nor its finish', async (t) => {
  const { redis, store, create } = await setup(t);
  const id = await create();
  const stale = (await store.activate(id, id, 'r1'))!;
  await store.activate(id, id, 'r2'); // another runner took it over: a new epoch
  await store.record(stale, reply('t0-model'), modelEvent, usage, [], { defer: true });
  await t.rejects(
    store.finish(stale.state, stale.epoch, { status: 'succeeded', output: 'hi', content: 'hi' }, stale),
    FencedOutError,
  );
  t.equal(await redis.hget(keys.calls(id, id), 't0-model'), null);
  t.equal(await redis.hget(keys.invocation(id, id), 'status'), 'running');
});

const react = { firstCallId: 't0-model', model: 'default', defHash: 'x', child: false };

t.test("a fresh activation records its first call's started in the same step; no other does", async (t) => {
  const { redis, store, create } = await setup(t);
  const id = await create();
  const a = (await store.activate(id, id, 'r1', react))!;
  t.equal(a.prestarted, 't0-model', 'the first call is recorded');
  const stored = JSON.parse((await redis.hget(keys.calls(id, id), 't0-model'))!);
  t.strictSame(stored, {
    v: 1,
    callId: 't0-model',
    kind: 'model',
    name: 'default',
    status: 'started',
    startedAt: stored.startedAt,
    runner: 'r1',
  });
  t.match(a.records.get('t0-model'), { status: 'started' }, 'and in the records it loaded');
  // A second activation (a crash took the first): the call is in doubt, recorded by callModel.
  const again = (await store.activate(id, id, 'r2', react))!;
  t.equal(again.prestarted, undefined, 'a recovered activation records nothing with ACTIVATE');
  t.ok(again.recovered);
});

t.test('a parent resumed from its children records the call it named when it parked', async (t) => {
  const { redis, store, create } = await setup(t);
  const scripts = meshScripts(redis);
  const id = await create();
  const a = (await store.activate(id, id, 'r1', react))!;
  const park = (resume?: string) =>
    scripts.park(
      keys.invocation(id, id),
      keys.events(id),
      a.epoch,
      'waiting',
      'now',
      ...(resume ? ['', resume] : []),
    );
  await park('t1-model');
  const resumed = (await store.activate(id, id, 'r1', react))!;
  t.equal(resumed.prestarted, 't1-model');
  t.match(resumed.records.get('t1-model'), { kind: 'model', status: 'started', runner: 'r1' });
  t.equal(await redis.hget(keys.invocation(id, id), 'resumeCall'), null, 'the name is used once');
  // Parked without one (tool calls or approvals ran in that turn too): nothing is recorded.
  const b = (await store.activate(id, id, 'r1'))!;
  await scripts.park(keys.invocation(id, id), keys.events(id), b.epoch, 'waiting', 'now', '', 't2-model');
  await scripts.park(keys.invocation(id, id), keys.events(id), b.epoch, 'waiting', 'now');
  t.equal((await store.activate(id, id, 'r1', react))!.prestarted, undefined, 'a later park clears it');
  t.equal(await redis.hexists(keys.calls(id, id), 't2-model'), 0);
});

t.test('the first call is not recorded where the runner would refuse the activation', async (t) => {
  const { redis, store, create } = await setup(t);
  const refused = async (id: string, r = react) => {
    const a = (await store.activate(id, id, 'r1', r))!;
    return a.prestarted === undefined && (await redis.hlen(keys.calls(id, id))) === 0;
  };
  t.ok(await refused(await create(), { ...react, defHash: 'changed' }), 'a changed definition');
  const cancelled = await create();
  await redis.hset(keys.invocation(cancelled, cancelled), 'cancelRequested', '1');
  t.ok(await refused(cancelled), 'a cancelled invocation');
  t.ok(await refused(await create({ deadline: Date.now() - 1 })), 'a deadline passed');
  t.ok(await refused(await create({ budget: 100 })), 'a tree with a budget (the runner checks it)');
  t.ok(await refused(await create(), { ...react, child: true }), 'a child whose input is not checked yet');
  const checked = await create();
  await redis.hset(keys.invocation(checked, checked), 'inputChecked', '1');
  t.equal(
    (await store.activate(checked, checked, 'r1', { ...react, child: true }))!.prestarted,
    't0-model',
    'a child whose parent checked its input is recorded',
  );
});
