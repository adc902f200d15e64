// An activation's steps (src/loop/steps/): what a failed model call records (callModel), the
// code agent's call batch and replay memory, a child's job riding behind its submission (childJobs,
// with the fast path's guarded add and park, against a real Redis), and the trace a system fault's
// line (runActivation) and a woken park's line (wakeDecidedParks) carry.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  type AgentPlan,
  type CallRecord,
  childId,
  invocationSpanId,
  type JobData,
  keyLayout,
  type Logger,
  loggerOptions,
  otel,
  startTracingWith,
} from '@agentmesh/shared';
import { type MeshRedis, meshScripts } from '@agentmesh/shared/redis';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { createRootInvocation } from '@agentmesh/test-support/root-invocation';
import { InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { type Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import t, { type Test } from 'tap';
import { WatchCheck } from '../src/loop/deltas/watch-check.js';
import { runnerMetrics } from '../src/loop/metrics.js';
import type { ChatModel } from '../src/loop/model/chat-model.js';
import { wakeDecidedParks } from '../src/loop/steps/approvals/wake-decided-parks.js';
import { callModel } from '../src/loop/steps/call-model.js';
import { childJobs } from '../src/loop/steps/child-jobs.js';
import { CallBatch } from '../src/loop/steps/code-agent/call-batch.js';
import { ReplayMemory } from '../src/loop/steps/code-agent/replay-memory.js';
import { runActivation } from '../src/loop/steps/run-activation.js';
import type { RunnerContext } from '../src/loop/steps/runner-context.js';
import { type Activation, ActivationStore, FencedOutError } from '../src/loop/store/activation-store.js';
import { checkChildJobs, defineGuardedAdd, queueChildJobs } from '../src/queue/fast-path/guarded-add.js';
import { defineGuardedPark, queueParkJob } from '../src/queue/fast-path/guarded-park.js';

/**
 * Tracing on, into `processors`, until test `t` ends; then its provider is shut down and the
 * OpenTelemetry API's globals it registered (tracer provider, context manager, propagator) are
 * given back. A provider shut down stays registered otherwise, and a later start in this process
 * could not register its own: its spans would go to the one shut down. The tests after it run
 * untraced, as in a process of their own.
 */
async function traceDuring(t: Test, processors: SpanProcessor[] = []): Promise<void> {
  const tracing = await startTracingWith(processors);
  t.teardown(async () => {
    await tracing.shutdown();
    otel.trace.disable();
    otel.context.disable();
    otel.propagation.disable();
  });
}

// callModel: what a failed model call records. The user sees our words for the runner's own
// faults (never a raw Redis or network message: issue 7, defect 8), the log keeps the detail, and
// a store failure after the reply is a system fault that propagates instead of failing the model call.
t.test('callModel', async (t) => {
  const agent: AgentPlan = {
    name: 'solo',
    kind: 'react',
    description: '',
    model: 'default',
    tools: [],
    subagents: [],
    maxIterations: 10,
    inputSchema: null,
    outputSchema: null,
    callables: [],
    definitionHash: 'x',
  };

  /** A context whose store keeps records in memory (or fails when told), with a recording log. */
  function harness(model: ChatModel, failOn?: CallRecord['status']) {
    const recorded: CallRecord[] = [];
    const logged: unknown[] = [];
    const log: Logger = { info() {}, debug() {}, error() {}, warn: (obj) => void logged.push(obj) };
    const ctx = {
      runnerId: 'r1',
      plan: { agents: { solo: agent } },
      models: new Map([['default', model]]),
      metrics: runnerMetrics(),
      log,
      store: {
        record: async (_a: Activation, r: CallRecord) => {
          if (r.status === failOn) throw new Error('Connection is closed. (redis 10.0.0.7:6379)');
          recorded.push(r);
        },
      },
    } as unknown as RunnerContext;
    const a = {
      epoch: 1,
      recovered: false,
      state: {
        id: 'inv_1',
        rootId: 'inv_1',
        agent: 'solo',
        input: { prompt: 'go' },
        deadline: Date.now() + 60_000,
      },
      records: new Map(),
    } as unknown as Activation;
    return { ctx, a, recorded, logged };
  }
  const signal = new AbortController().signal;

  t.test(
    'a model client that throws a raw error fails the call with the registry message only',
    async (t) => {
      const model: ChatModel = {
        complete: async () => {
          throw new Error('connect ECONNREFUSED 10.0.0.7:6379');
        },
      };
      const h = harness(model);
      const error = await callModel(h.ctx, agent, h.a, 0, 't0-model', signal);
      t.strictSame(error, { code: 'model_error', message: 'The model endpoint refused the request.' });
      t.match(h.recorded.at(-1), { status: 'failed', error: { code: 'model_error' } });
      t.notMatch(JSON.stringify(h.recorded), /ECONNREFUSED|10\.0\.0\.7/, 'nothing of it is recorded');
      t.match(JSON.stringify(h.logged), /ECONNREFUSED 10\.0\.0\.7:6379/, 'the log has the detail');
    },
  );

  t.test('a store failure after the reply propagates: the call stays in doubt, not failed', async (t) => {
    const model: ChatModel = {
      complete: async () => ({
        content: 'hi',
        toolCalls: [],
        usage: { promptTokens: 1, completionTokens: 1 },
      }),
    };
    const h = harness(model, 'succeeded');
    await t.rejects(callModel(h.ctx, agent, h.a, 0, 't0-model', signal), /Connection is closed/);
    t.strictSame(
      h.recorded.map((r) => r.status),
      ['started'],
      'no failure is recorded for the model call',
    );
  });
});

// CallBatch: the code agent's calls started together (ctx.subagent and ctx.step) are capped per turn.
t.test('CallBatch', async (t) => {
  t.test(
    'calls past the per-turn cap are refused too_many_calls, delegations among them too_many_delegations',
    async (t) => {
      const batch = new CallBatch({ maxCallsPerTurn: 4, maxDelegationsPerTurn: 2 });
      const verdicts = (['subagent', 'step', 'subagent', 'subagent', 'step', 'subagent'] as const).map(
        (kind) => batch.admit(kind)?.code ?? 'ok',
      );
      t.strictSame(verdicts, ['ok', 'ok', 'ok', 'too_many_delegations', 'too_many_calls', 'too_many_calls']);
    },
  );

  t.test('a result reaching the code starts a new batch', async (t) => {
    const batch = new CallBatch({ maxCallsPerTurn: 1, maxDelegationsPerTurn: 1 });
    t.equal(batch.admit('subagent'), undefined);
    t.equal(batch.admit('step')?.code, 'too_many_calls');
    batch.reset();
    t.equal(batch.admit('subagent'), undefined);
    t.match(batch.admit('subagent'), {
      code: 'too_many_calls',
      message: 'At most 1 calls (ctx.subagent and ctx.step) may be started together.',
    });
  });
});

// ReplayMemory: the code agent's memory while its code is replayed, whose writes are buffered and
// replaced by a record's committed log.
t.test('ReplayMemory', async (t) => {
  t.test('writes are buffered as JSON until taken; a delete is an empty value', async (t) => {
    const memory = new ReplayMemory();
    await memory.set('a', { n: 1 });
    await memory.set('b', undefined);
    await memory.delete('a');
    t.strictSame(memory.take(), [
      ['a', '{"n":1}'],
      ['b', 'null'],
      ['a', ''],
    ]);
    t.strictSame(memory.take(), []);
    t.equal(await memory.get('a'), undefined);
    t.equal(await memory.get('b'), null);
  });

  t.test("a record's log replaces the writes re-executed before it and is applied in order", async (t) => {
    const memory = new ReplayMemory();
    await memory.set('count', 1);
    memory.apply([
      ['count', '1'],
      ['inside', '{"from":"step"}'],
      ['count', ''],
    ]);
    t.strictSame(memory.take(), [], 'committed writes are not committed again');
    t.equal(await memory.get('count'), undefined);
    t.strictSame(await memory.get('inside'), { from: 'step' });
  });

  t.test('a value read is a copy: changing it changes nothing stored', async (t) => {
    const memory = new ReplayMemory();
    await memory.set('list', [1]);
    const { get } = memory;
    (await get<number[]>('list'))!.push(2);
    t.strictSame(await memory.get('list'), [1]);
  });
});

// A child's job rides in the pipeline that creates the child, behind BullMQ's own add step guarded
// by the parent's epoch: it is the job BullMQ would add, linked to the parent's job, and an
// activation fenced out (another took the parent over) adds none. Of several children, the first
// and its job go out in a write of their own, ahead of the rest and the park. The parent's job
// parks in the last write (queue/fast-path/guarded-park.ts): waiting for its children, guarded by the epoch as well.
t.test('childJobs', async (t) => {
  const keys = keyLayout('childjobs');
  let n = 0;

  async function setup(t: Test) {
    const server = await startRedis();
    const redis = new Redis(server.url, { maxRetriesPerRequest: null });
    const scripts = meshScripts(redis);
    defineGuardedAdd(redis);
    defineGuardedPark(redis);
    const store = new ActivationStore(redis, scripts, keys, 3600);
    const queues = new Map(
      ['boss', 'helper'].map((name) => [
        name,
        new Queue(name, { connection: redis, prefix: keys.bullPrefix }),
      ]),
    );
    t.teardown(async () => {
      await Promise.all([...queues.values()].map((q) => q.close()));
      redis.disconnect();
      await server.stop();
    });
    const id = `inv_${String(++n).padStart(32, '0')}`;
    await createRootInvocation(scripts, keys, id);
    const parentJob = await queues
      .get('boss')!
      .add('boss', { v: 1, invocationId: id, rootId: id, agent: 'boss' }, { jobId: id });
    const activate = async () => (await store.activate(id, id, 'r1'))!;
    const jobsOf = (a: Activation) => childJobs(parentJob, a, [{ name: 'helper', callId: 't0-c0' }], 3600);
    const helperJob = () => queues.get('helper')!.getJob(childId(id, 't0-c0'));
    return { redis, store, queues, id, parentJob, activate, jobsOf, helperJob };
  }

  const submission = (a: Activation, callId = 't0-c0') => {
    const cid = childId(a.state.id, callId);
    const record: CallRecord = {
      v: 1,
      callId,
      kind: 'subagent',
      name: 'helper',
      status: 'started',
      startedAt: new Date().toISOString(),
      childId: cid,
    };
    return {
      callId,
      record,
      agent: 'helper',
      input: { prompt: 'x' },
      deadline: Date.now() + 60_000,
      defHash: 'h',
    };
  };

  t.test(
    'the child job rides behind its submission, linked to the parent job as BullMQ links it',
    async (t) => {
      const { redis, store, queues, id, parentJob, activate, jobsOf, helperJob } = await setup(t);
      const a = await activate();
      const replies = await store.submitChildren(a, [submission(a)], {
        park: true,
        behind: (p, inv) => queueChildJobs(p, queues, jobsOf(a), a, inv),
      });
      t.equal(replies.length, 1, 'the add step answered with the submission');
      checkChildJobs(a, replies);
      const job = await helperJob();
      t.ok(job, 'the child job is in its queue');
      t.strictSame(job!.data, { v: 1, invocationId: childId(id, 't0-c0'), rootId: id, agent: 'helper' });
      t.equal(job!.parentKey, `${keys.bullPrefix}:boss:${id}`);
      t.equal(job!.opts.attempts, 3, 'the retry options of every mesh job');
      t.equal(await job!.getState(), 'waiting');
      const deps = await redis.smembers(`${keys.bullPrefix}:boss:${parentJob.id}:dependencies`);
      t.strictSame(deps, [`${keys.bullPrefix}:helper:${job!.id}`], 'the parent waits for it');
      t.equal(
        await redis.hget(keys.invocation(id, childId(id, 't0-c0')), 'status'),
        'queued',
        'its child exists',
      );
    },
  );

  t.test('an activation fenced out adds no child job; the one holding the parent does', async (t) => {
    const { redis, queues, activate, jobsOf, helperJob } = await setup(t);
    const stale = await activate();
    const current = await activate(); // another activation took the parent over
    const add = async (a: Activation) => {
      const p = redis.pipeline();
      queueChildJobs(p, queues, jobsOf(a), a, keys.invocation(a.state.rootId, a.state.id));
      return (await p.exec()) ?? [];
    };
    t.throws(() => checkChildJobs(stale, [[null, -9001]]), FencedOutError);
    const refused = await add(stale);
    t.throws(() => checkChildJobs(stale, refused), FencedOutError, 'the guard refused it');
    t.equal(await helperJob(), undefined, 'no job was added');
    checkChildJobs(current, await add(current));
    t.ok(await helperJob(), 'added under the epoch that holds the parent');
    // A second add of the same job (a re-run after a crash) is BullMQ's no-op, not an error.
    checkChildJobs(current, await add(current));
    t.equal((await queues.get('helper')!.getJobCounts('waiting')).waiting, 1);
  });

  t.test(
    'the first of several children goes out alone with its job; the rest and the park follow',
    async (t) => {
      const { redis, store, queues, id, parentJob, activate } = await setup(t);
      const calls = ['t0-c0', 't0-c1', 't0-c2'].map((callId) => ({ name: 'helper', callId }));
      const writes: number[] = [];
      const pipeline = redis.pipeline.bind(redis);
      redis.pipeline = ((...args: Parameters<typeof pipeline>) => {
        const p = pipeline(...args);
        const exec = p.exec.bind(p);
        p.exec = (...e: Parameters<typeof exec>) => {
          writes.push(p.length);
          return exec(...e);
        };
        return p;
      }) as typeof redis.pipeline;
      const submit = async (a: Activation) => {
        const jobs = childJobs(parentJob, a, calls, 3600);
        return store.submitChildren(
          a,
          calls.map((c) => submission(a, c.callId)),
          {
            park: true,
            behind: (p, inv, part) =>
              queueChildJobs(
                p,
                queues,
                jobs.filter((_, i) => part.callIds.has(calls[i]!.callId)),
                a,
                inv,
              ),
          },
        );
      };
      const stale = await activate();
      const a = await activate(); // the parent taken over: `stale` is fenced out
      await t.rejects(submit(stale), FencedOutError, 'fenced out in every write');
      t.equal((await queues.get('helper')!.getJobCounts('waiting')).waiting, 0, 'and no job added');
      writes.length = 0;
      const replies = await submit(a);
      t.strictSame(writes, [2, 5], 'child 0 and its job; children 1–2, the park and their jobs');
      t.equal(replies.length, 3, "every job step's reply, in order");
      checkChildJobs(a, replies);
      for (const c of calls) {
        t.equal(await redis.hget(keys.invocation(id, childId(id, c.callId)), 'status'), 'queued');
        t.ok(await queues.get('helper')!.getJob(childId(id, c.callId)), `the job of ${c.callId}`);
      }
      t.equal(await redis.hget(keys.invocation(id, id), 'status'), 'waiting', 'parked in the last write');
    },
  );

  t.test("the parent's job parks in the submission's last write, behind its children's jobs", async (t) => {
    const { redis, queues, id, parentJob, activate, jobsOf } = await setup(t);
    // The parent's job taken as a worker takes it: held with a token.
    const worker = new Worker('boss', null, { connection: redis, prefix: keys.bullPrefix });
    t.teardown(() => worker.close());
    const held = (await worker.getNextJob('tok-1', { block: false }))!;
    t.equal(held.id, parentJob.id);
    const inv = keys.invocation(id, id);
    /** A write of the steps `queue` puts on it, with the park last; the park's answer. */
    const write = async (a: Activation, token: string, queue: (p: object) => void = () => undefined) => {
      const p = redis.pipeline();
      queue(p);
      const parked = queueParkJob(p, held, token, a, inv);
      await p.exec();
      return parked;
    };
    const stale = await activate();
    const a = await activate(); // `stale` is fenced out
    await t.rejects(write(stale, 'tok-1'), FencedOutError, 'a fenced-out activation parks nothing');
    t.equal(await held.getState(), 'active');
    t.equal(await write(a, 'tok-1'), false, 'no child pending: the job stays active');
    t.equal(await held.getState(), 'active');
    await t.rejects(
      write(a, 'tok-2', (p) => queueChildJobs(p, queues, jobsOf(a), a, inv)),
      /lock/i,
      'a job whose lock is not the token’s is not moved (BullMQ’s own error)',
    );
    t.equal(await held.getState(), 'active');
    t.equal(await write(a, 'tok-1'), true, 'behind its child’s job: it waits for it');
    t.equal(await held.getState(), 'waiting-children');
    t.equal(await redis.exists(`${keys.bullPrefix}:boss:${held.id}:lock`), 0, 'its lock released');
  });
});

// runActivation: a system fault's log line is written inside the activation's span, so that it
// carries the trace's ids like every other line of the activation (docs/reference/traces.md).
t.test('runActivation', async (t) => {
  const exporter = new InMemorySpanExporter();
  await traceDuring(t, [new SimpleSpanProcessor(exporter)]);

  t.test("a system fault's line carries the trace and span ids of the activation it ended", async (t) => {
    const lines: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(JSON.parse(String(chunk)));
        cb();
      },
    });
    const fault = new Error('connect ECONNREFUSED 10.0.0.7:6379');
    const ctx = {
      runnerId: 'r1',
      plan: { agents: {} },
      codeAgents: {},
      store: { activate: () => Promise.reject(fault) },
      log: pino(loggerOptions('runner', 'info'), sink),
    } as unknown as RunnerContext;
    const traceId = randomBytes(16).toString('hex');
    const data = {
      v: 1,
      invocationId: 'inv_1',
      rootId: 'inv_1',
      agent: 'solo',
      traceparent: `00-${traceId}-${'ab'.repeat(8)}-01`,
    } as JobData;
    const job = { id: 'j1', data } as Job<JobData>;

    await t.rejects(runActivation(ctx, job, 'token', new AbortController().signal), fault);
    await new Promise((r) => setImmediate(r));
    const [activation] = exporter.getFinishedSpans().filter((s) => s.name === 'activation solo');
    t.ok(activation, 'the activation has its span');
    const line = lines.find((l) => l.msg === 'activation failed on a system fault; the job is retried');
    t.match(line, {
      level: 50,
      jobId: 'j1',
      invocationId: 'inv_1',
      err: fault.message,
      trace_id: traceId,
      span_id: activation?.spanContext().spanId,
    });
  });
});

// runActivation: the watch key an activation read (ACTIVATE, or the take that ran it) answers its
// first model call's watch check, unless the job then waited for a slot (docs/guides/streaming.md).
t.test(
  "an activation's read of the watch key answers the watch check, unless it waited for a slot",
  async (t) => {
    const stop = new Error('stop after the activation');
    const activation = (watched: boolean) =>
      ({
        epoch: 1,
        recovered: false,
        watched,
        state: { id: 'inv_w', rootId: 'inv_w', agent: 'solo' },
        records: new Map(),
      }) as unknown as Activation;
    const run = async (how: 'activate' | 'taken' | 'taken late', watched: boolean) => {
      const watch = new WatchCheck({} as MeshRedis, keyLayout('mesh'));
      const ctx = {
        runnerId: 'r1',
        plan: { agents: {} },
        codeAgents: {},
        deltas: { watch },
        store: {
          activate: async () => activation(watched),
          taken: () => activation(watched),
          readTexts: () => Promise.reject(stop), // the activation stops right after its watch was read
        },
        log: pino({ enabled: false }),
      } as unknown as RunnerContext;
      const job = {
        id: 'j1',
        data: { v: 1, invocationId: 'inv_w', rootId: 'inv_w', agent: 'solo' },
      } as Job<JobData>;
      const taken = how === 'activate' ? undefined : { reply: [] as never, late: how === 'taken late' };
      await t.rejects(runActivation(ctx, job, 'token', new AbortController().signal, taken), stop);
      return watch.known('inv_w');
    };
    t.equal(await run('activate', true), true, 'ACTIVATE read it watched');
    t.equal(await run('activate', false), false, 'ACTIVATE read it unwatched');
    t.equal(await run('taken', true), true, 'the take read it');
    t.equal(await run('taken late', true), undefined, 'taken, then waited for a slot: asked again');
  },
);

// wakeDecidedParks: the watchdog's line about a parked invocation it wakes carries that
// invocation's trace (its invoke_agent span), though no activation of it is running (docs/reference/traces.md).
t.test('wakeDecidedParks', async (t) => {
  await traceDuring(t);

  t.test(
    "waking a parked invocation is logged in the trace of that invocation's invoke_agent span",
    async (t) => {
      const lines: Record<string, unknown>[] = [];
      const sink = new Writable({
        write(chunk, _enc, cb) {
          lines.push(JSON.parse(String(chunk)));
          cb();
        },
      });
      const traceId = randomBytes(16).toString('hex');
      let promoted = 0;
      const job = {
        id: 'j1',
        data: { v: 1, invocationId: 'inv_1', traceparent: `00-${traceId}-${'ab'.repeat(8)}-01` },
        promote: async () => void promoted++,
      };
      const queue = { getDelayed: async () => [job] } as unknown as Queue;
      // Every approval decided: the invocation no longer waits.
      const redis = { hmget: async () => ['waiting', 'j1', null, '0'] } as unknown as MeshRedis;

      await wakeDecidedParks(redis, queue, (id) => `inv:${id}`, pino(loggerOptions('runner', 'info'), sink));
      await new Promise((r) => setImmediate(r));
      t.equal(promoted, 1);
      t.match(lines, [
        {
          msg: 'waking an invocation parked on a decided approval',
          invocationId: 'inv_1',
          trace_id: traceId,
          span_id: invocationSpanId(traceId, 'inv_1'),
        },
      ]);
    },
  );
});
