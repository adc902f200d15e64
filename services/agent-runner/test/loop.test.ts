// The loop's own modules outside model/, remote/ and steps/ (which have their files): what a failed
// job tells BullMQ (job-errors.ts), timeoutSignal, the tool-host client (tools/) and the
// ActivationStore against a real Redis (store/).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CallRecord, keyLayout, type Logger, MeshError, type ToolContext } from '@agentmesh/shared';
import { meshScripts } from '@agentmesh/shared/redis';
import { freePort, startRedis } from '@agentmesh/test-support/redis-server';
import { createRootInvocation } from '@agentmesh/test-support/root-invocation';
import { type Job, UnrecoverableError, WaitingChildrenError } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { logSystemFault, settleJobError } from '../src/loop/job-errors.js';
import { ActivationStore, FencedOutError } from '../src/loop/store/activation-store.js';
import { timeoutSignal } from '../src/loop/timeout-signal.js';
import { ToolClient } from '../src/loop/tools/tool-client.js';

// settleJobError: what BullMQ (and a parent reading a child job's failedReason) learns of a failed
// activation. A system fault's own words go to the log only (issue 7, defect 8): logSystemFault.
t.test('settleJobError and logSystemFault', async (t) => {
  const job = { id: 'j1', data: { v: 1, invocationId: 'inv_1' } } as unknown as Job;
  const thrown = async (e: unknown): Promise<unknown> => {
    try {
      await settleJobError(e, job, 'token');
    } catch (settled) {
      return settled;
    }
    throw new Error('expected settleJobError to throw');
  };

  const logging = () => {
    const logged: unknown[] = [];
    const log: Logger = { info() {}, debug() {}, warn() {}, error: (obj) => void logged.push(obj) };
    return { log, logged };
  };

  t.test('a Redis error is rethrown in our words, and its detail is logged', async (t) => {
    const fault = new Error('connect ECONNREFUSED 10.0.0.7:6379');
    const settled = (await thrown(fault)) as Error;
    t.equal(settled.name, 'SystemFaultError');
    t.equal(settled.message, 'The runner hit a system fault (logged by the runner); the job is retried.');
    const { log, logged } = logging();
    logSystemFault(fault, job, log);
    t.match(logged, [{ jobId: 'j1', invocationId: 'inv_1', err: 'connect ECONNREFUSED 10.0.0.7:6379' }]);
  });

  t.test("BullMQ's control errors and mesh errors pass unchanged, and are not logged", async (t) => {
    const { log, logged } = logging();
    for (const e of [
      new WaitingChildrenError(),
      new UnrecoverableError('bad data'),
      new MeshError('cancelled'),
    ]) {
      t.equal(await thrown(e), e, e.name);
      logSystemFault(e, job, log);
    }
    t.same(logged, []);
  });
});

// timeoutSignal (services/agent-runner/src/loop/timeout-signal.ts): the signal of a call bounded
// by its caller's signal and a timeout, whose timer and listener never outlive what they are for.
// The timers are counted before and after in the same synchronous run: those of earlier tests in
// this process do not change between the two counts.
t.test('timeoutSignal', async (t) => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

  t.test("aborts with the caller's reason, and its timer goes at once", async (t) => {
    const caller = new AbortController();
    const before = timers();
    const bounded = timeoutSignal(caller.signal, 60_000);
    t.equal(timers(), before + 1, 'a timer while the call runs');
    caller.abort(new Error('cancelled'));
    t.equal(bounded.signal.reason.message, 'cancelled');
    t.equal(timers(), before, 'no timer left to hold the process for a minute');
  });

  t.test('aborts with a TimeoutError after ms, and stops listening to the caller', async (t) => {
    const caller = new AbortController();
    const bounded = timeoutSignal(caller.signal, 10);
    await new Promise((resolve) => bounded.signal.addEventListener('abort', resolve, { once: true }));
    t.equal((bounded.signal.reason as DOMException).name, 'TimeoutError');
    caller.abort(new Error('later'));
    t.equal((bounded.signal.reason as DOMException).name, 'TimeoutError', 'the first reason stays');
  });

  t.test('clear() ends the timer; an aborted caller aborts it at once', async (t) => {
    const before = timers();
    const bounded = timeoutSignal(new AbortController().signal, 60_000);
    bounded.clear();
    t.equal(timers(), before);
    t.notOk(bounded.signal.aborted);
    const gone = AbortSignal.abort(new Error('already'));
    t.equal(timeoutSignal(gone, 60_000).signal.reason.message, 'already');
    t.equal(timers(), before);
  });
});

// ToolClient: what a tool call's failure tells the model. The tool's own words pass (docs/reference/callables-and-results.md);
// the runner's (an unreachable tool-host's address, ECONNREFUSED) go to the log only (issue 7, defect 8).
t.test('ToolClient', async (t) => {
  const context = (ms: number): ToolContext => ({
    invocationId: 'inv_1',
    callId: 't0-call0',
    agent: 'boss',
    deadline: new Date(Date.now() + ms).toISOString(),
    idempotencyKey: 'inv_1/t0-call0',
  });
  const opts = { signal: new AbortController().signal, timeoutMs: 5000 };

  t.test('an unreachable tool-host fails the call without its address reaching the model', async (t) => {
    const port = await freePort();
    const client = new ToolClient(`http://127.0.0.1:${port}`, undefined);
    const outcome = await client.invoke('clock', {}, context(500), opts);
    t.strictSame(outcome.ok ? undefined : outcome.error, {
      code: 'tool_failed',
      message: 'the tool-host could not be reached',
    });
    t.match(outcome.ok ? '' : outcome.detail, `127.0.0.1:${port}`, 'the log gets the address and the cause');
  });

  t.test("a tool's own failure message, as the tool-host returns it, reaches the model as is", async (t) => {
    const server = http.createServer((_req, res) => {
      res.writeHead(502, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'tool_failed', message: 'disk full' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => server.close(() => r())));
    const client = new ToolClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, undefined);
    const outcome = await client.invoke('clock', {}, context(5000), opts);
    t.strictSame(outcome, { ok: false, error: { code: 'tool_failed', message: 'disk full' } });
  });
});

// ActivationStore against a real Redis: a deferred record (a model reply) leaves with the
// activation's next write, in the same round trip, and is never written by a fenced-out activation.
t.test('ActivationStore', async (t) => {
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

  t.test(
    'a deferred model reply is written by the finish, in the same step, before its events',
    async (t) => {
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
    },
  );

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
});
