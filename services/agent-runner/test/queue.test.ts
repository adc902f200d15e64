// The runner's queue parts (src/queue/): its slots, the guard of the queue fast path against the
// installed BullMQ, and activation in the take (fast-path/take-activation.ts) on a real Redis. The
// fetch steps, early start, gone-runner watch and taken locks have their own files (runner-*.test.ts,
// queue-taken-lock.test.ts): each takes seconds.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { keyLayout } from '@agentmesh/shared';
import { meshScripts } from '@agentmesh/shared/redis';
import { type MonitoredCommand, monitorRedis } from '@agentmesh/test-support/redis-monitor';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { createRootInvocation } from '@agentmesh/test-support/root-invocation';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { Job, Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import type { TakenActivation } from '../src/loop/fast-path-ports.js';
import { ActivationStore } from '../src/loop/store/activation-store.js';
import { BULLMQ_VERSION } from '../src/queue/fast-path/bullmq-script.js';
import { fetchScripts } from '../src/queue/fast-path/fetch-scripts.js';
import { TakenActivations } from '../src/queue/fast-path/take-activation.js';
import { takeStepLua } from '../src/queue/fast-path/take-step.js';
import { Slots } from '../src/queue/slots.js';
import { takingConnection } from './support/taking-connection.js';

// The runner's slots: a take activates its job only while one is free (take-activation.ts), and
// an activation that had to wait for one says so (its model call is then checked again).
t.test('Slots', async (t) => {
  t.test('slots are taken in order; free counts none while any activation waits', async (t) => {
    const slots = new Slots(2);
    t.equal(slots.free, 2);
    t.equal(await slots.acquire(), false, 'a free slot: no wait');
    t.equal(await slots.acquire(), false);
    t.equal(slots.free, 0);
    const order: string[] = [];
    const a = slots.acquire().then((waited) => order.push(`a ${waited}`));
    const b = slots.acquire().then((waited) => order.push(`b ${waited}`));
    t.equal(slots.free, 0);
    slots.release();
    await a;
    t.strictSame(order, ['a true'], 'the longest waiter gets the slot released, and says it waited');
    t.equal(slots.free, 0, 'b still waits');
    slots.release();
    await b;
    t.strictSame(order, ['a true', 'b true']);
    slots.release();
    t.equal(slots.free, 1);
    t.equal(slots.inUse, 1);
  });
});

// The guard of the queue fast path (docs/architecture/queue-fast-path.md, "Upgrading BullMQ"): each
// BullMQ step it builds on is read from the installed package (node_modules/bullmq), and its
// highest KEYS and ARGV indexes and its answers are checked against what the fast path assumes —
// the arguments it appends start past the last one BullMQ reads, its own answers collide with
// none of BullMQ's, the answer it extends has the fields it counts on — and each private member
// of BullMQ's worker it wraps or calls still exists. A BullMQ upgrade that moves any of these fails
// here, before a mesh runs on it.
t.test("the queue fast path's guard", async (t) => {
  const require = createRequire(import.meta.url);

  /** BullMQ's step as the installed package ships it (its text, and how many keys it takes). */
  function upstream(name: string, keys: number): string {
    const script = (
      require(`bullmq/dist/cjs/scripts/${name}-${keys}.js`) as Record<
        string,
        { content: string; keys: number }
      >
    )[name];
    if (!script) throw new Error(`bullmq ${BULLMQ_VERSION} ships no ${name}-${keys}`);
    if (script.keys !== keys) throw new Error(`${name}: ${script.keys} keys, not ${keys}`);
    return script.content;
  }

  /** The indexes a script reads of `table` (KEYS or ARGV); throws on any index that is not a literal. */
  function indexes(lua: string, table: 'KEYS' | 'ARGV'): number[] {
    const found: number[] = [];
    for (const m of lua.matchAll(new RegExp(`(#?)\\b${table}\\b(\\[([^\\]]*)\\])?`, 'g'))) {
      if (m[1] === '#' || m[3] === undefined || !/^\d+$/.test(m[3].trim()))
        throw new Error(`${table} read other than at a literal index: "${m[0]}"`);
      found.push(Number(m[3]));
    }
    return found;
  }

  /** The literal numbers a script answers with (`return -2`, `return 1`). */
  const numericAnswers = (lua: string) =>
    new Set([...lua.matchAll(/\breturn\s+(-?\d+)\b(?!\s*[*/+.-])/g)].map((m) => Number(m[1])));

  /** The table literals a script answers with (`return {a, b}`), as their top-level fields. */
  function tableAnswers(lua: string): string[][] {
    const out: string[][] = [];
    for (const m of lua.matchAll(/\breturn\s+\{/g)) {
      let depth = 0;
      let field = '';
      const fields: string[] = [];
      for (const ch of lua.slice(m.index + m[0].length - 1)) {
        if (ch === '{' || ch === '(') depth++;
        if (ch === '}' || ch === ')') depth--;
        if (depth === 0) break;
        if (depth === 1 && ch === ',') {
          fields.push(field.trim());
          field = '';
        } else if (!(depth === 1 && ch === '{')) field += ch;
      }
      if (field.trim() !== '') fields.push(field.trim());
      out.push(fields);
    }
    return out;
  }

  /**
   * Each step the fast path builds on: its keys, the highest ARGV BullMQ reads (the fast path's own
   * arguments start right after it), and where the fast path relies on that.
   */
  const STEPS = [
    // The take: its settings are appended as the last argument (take-activation.ts): ARGV[4].
    { name: 'moveToActive', keys: 11, argv: 3 },
    // The completion that fetches the next job: the take's settings are its last argument, ARGV[10].
    { name: 'moveToFinished', keys: 14, argv: 9 },
    // The guarded add: ARGV[4] the parent's invocation, ARGV[5] its epoch (guarded-add.ts).
    { name: 'addStandardJob', keys: 9, argv: 3 },
    // The guarded park: ARGV[6] the parent's invocation, ARGV[7] its epoch (guarded-park.ts).
    { name: 'moveToWaitingChildren', keys: 7, argv: 5 },
    // The gone-runner reclaim: ARGV[5] the gone runner's name (gone-runner-steps.ts).
    { name: 'moveStalledJobsToWait', keys: 9, argv: 4 },
  ] as const;

  t.test(`bullmq ${BULLMQ_VERSION}: each step reads the KEYS and ARGV the fast path leaves it`, async (t) => {
    for (const step of STEPS) {
      const lua = upstream(step.name, step.keys);
      t.equal(Math.max(...indexes(lua, 'KEYS')), step.keys, `${step.name}: its highest KEYS is its last key`);
      t.equal(
        Math.max(...indexes(lua, 'ARGV')),
        step.argv,
        `${step.name}: its highest ARGV is ${step.argv}; the fast path's own start at ${step.argv + 1}`,
      );
    }
  });

  t.test('the answers the fast path reads or adds to are as it assumes', async (t) => {
    const take = upstream('moveToActive', 11);
    const tables = tableAnswers(take);
    t.ok(tables.length > 0, 'the take answers with tables');
    t.same(
      tables.map((fields) => fields.length),
      tables.map(() => 4),
      'every answer of the take has four fields (job data, id, rate-limit delay, delay): the fifth is the activation (take-activation.ts)',
    );
    t.ok(
      take.includes('return {rcall("HGETALL", jobKey), jobId, 0, 0}'),
      'a job taken is answered as the fast path changes it',
    );
    t.ok(take.includes('return {0, 0, 0, 0}'), 'no job is four zeros');

    const add = upstream('addStandardJob', 9);
    t.notOk(numericAnswers(add).has(-9001), 'the guard refusal (-9001) is none of the add’s codes');

    const park = upstream('moveToWaitingChildren', 7);
    const parkCodes = numericAnswers(park);
    t.ok(
      parkCodes.has(0) && parkCodes.has(1),
      'the park answers 0 (waiting) or 1 (no child pending), as guarded-park.ts reads',
    );
    t.ok(
      [...parkCodes].every((c) => c === 0 || c === 1 || c < 0),
      'and negative codes otherwise (BullMQ’s errors)',
    );
    t.notOk(parkCodes.has(-9001), 'none of them the guard refusal (-9001)');

    const stalled = upstream('moveStalledJobsToWait', 9);
    t.ok(
      /\breturn\s+\{\}/.test(stalled),
      "the stalled check answers an empty table when it moves none, as the reclaim's prelude does",
    );
  });

  t.test('the changed steps build from this version (no changed line moved)', async (t) => {
    t.doesNotThrow(() => fetchScripts(), 'moveToActive and moveToFinished (fetch-scripts.ts)');
    t.doesNotThrow(() => takeStepLua(), 'the take (take-step.ts)');
  });

  t.test("the private members of BullMQ's classes the fast path wraps or calls exist", async (t) => {
    const worker = Worker.prototype as unknown as Record<string, unknown>;
    // fetch-scripts.ts, early-start.ts
    for (const member of ['updateDelays', 'nextJobFromJobData', 'waitForJob', 'moveToActive', 'processJob'])
      t.type(worker[member], 'function', `Worker#${member}`);
    // The fields they read, as the installed classes' text sets them.
    const text = (file: string) => readFileSync(require.resolve(`bullmq/dist/cjs/classes/${file}`), 'utf8');
    const fields: [file: string, field: string][] = [
      ['worker.js', 'mainLoopQueue'],
      ['worker.js', 'drained'],
      ['job.js', 'backend'],
    ];
    for (const [file, field] of fields)
      t.match(text(file), new RegExp(`this\\.${field}\\b`), `${file} keeps ${field}`);
    t.ok(
      text('worker.js').includes('this.mainLoopQueue = asyncFifoQueue'),
      "the main loop's queue is the worker's mainLoopQueue",
    );
    // guarded-park.ts: the job's backend builds the park's arguments and reads its errors.
    const backend = require('bullmq/dist/cjs/classes/redis-queue-backend.js') as Record<
      string,
      { prototype: Record<string, unknown> }
    >;
    const Backend = Object.values(backend).find(
      (c) => typeof c?.prototype?.moveToWaitingChildrenArgs === 'function',
    );
    t.ok(Backend, 'the backend builds moveToWaitingChildren arguments (moveToWaitingChildrenArgs)');
    t.type(Backend?.prototype.finishedErrors, 'function', 'and reads its errors (finishedErrors)');
    // guarded-add.ts: a job adds itself through a client that stands in for the pipeline.
    t.type((Job.prototype as unknown as Record<string, unknown>).addJob, 'function', 'Job#addJob');
  });
});

// Activation in the take (take-activation.ts): on one Redis server the worker's fetch steps run
// ACTIVATE for the job they take, in the same step, and the processor gets its reply. What the take
// must not activate (no free slot, another agent's job, unknown data) is left to the processor,
// a gone invocation answers null, and a failure inside ACTIVATE reaches the processor.
t.test('TakenActivations: activation in the take', async (t) => {
  const server = await startRedis();
  t.teardown(() => server.stop());
  const redis = new Redis(server.url, { maxRetriesPerRequest: null });
  t.teardown(() => redis.disconnect());
  const keys = keyLayout('taketest');
  const scripts = meshScripts(redis);
  const store = new ActivationStore(redis, scripts, keys, 3600);
  const react = { firstCallId: 't0-model', model: 'default', defHash: 'x', inputSchema: false };
  let n = 0;

  /** Creates a root invocation of `solo`, as the gateway does. */
  async function create(): Promise<string> {
    const id = `inv_${String(++n).padStart(32, '0')}`;
    await createRootInvocation(scripts, keys, id);
    return id;
  }

  const job = (id: string, data: Record<string, unknown> = {}) => ({
    name: 'solo',
    data: { v: 1, invocationId: id, rootId: id, agent: 'solo', ...data },
    opts: { jobId: id },
  });

  /** A worker of `solo`'s queue as a runner builds it; each job's taken activation, by job id. */
  async function worker(
    t: Test,
    opts: { ready?: () => boolean; concurrency?: number; holdMs?: number } = {},
  ) {
    const prefix = `{q${++n}}`;
    const { connection, takes } = takingConnection(server.url, 'solo', { keys, react, ready: opts.ready });
    const taken = new Map<string, TakenActivation | undefined>();
    const queue = new Queue('agent-solo', { connection: redis, prefix });
    const w = new Worker(
      'agent-solo',
      async (j) => {
        taken.set(j.id!, takes.take(j.id));
        if (opts.holdMs) await new Promise((r) => setTimeout(r, opts.holdMs));
      },
      { connection, prefix, concurrency: opts.concurrency ?? 4, autorun: false },
    );
    t.teardown(async () => {
      await w.close();
      await queue.close();
      connection.disconnect();
    });
    const until = (ids: string[]) =>
      waitUntil(
        async () => ids.every((id) => taken.has(id)),
        5000,
        () => `jobs ${ids} taken`,
      );
    return { queue, w, taken, until };
  }

  t.test('the take of a job activates its invocation in the same step, model call started', async (t) => {
    const { queue, w, taken, until } = await worker(t);
    const id = await create();
    const monitor = await monitorRedis(server.port);
    t.teardown(() => monitor.stop());
    void w.run();
    await queue.add(job(id).name, job(id).data, job(id).opts);
    await until([id]);
    const a = store.taken(taken.get(id) as TakenActivation)!;
    t.match(a, { epoch: 1, recovered: false, prestarted: 't0-model' });
    t.match(a.state, { id, status: 'running' });
    t.equal(await redis.hget(keys.invocation(id, id), 'runner'), 'r1');
    t.match(JSON.parse((await redis.hget(keys.calls(id, id), 't0-model'))!), {
      kind: 'model',
      name: 'default',
      status: 'started',
      runner: 'r1',
    });
    const events = await redis.xrange(keys.events(id), '-', '+');
    t.match(JSON.parse(events.at(-1)![1][1]!), { type: 'status', data: { status: 'running' } });
    const activates = monitor.seen.filter(
      (c: MonitoredCommand) =>
        c.source !== 'lua' && c.args[0] === 'evalsha' && c.args[3] === keys.invocation(id, id),
    );
    t.equal(activates.length, 0, 'no step of its own: the take ran it');
    // Taken once: the processor's second look finds nothing (an activation is never reused).
    t.equal(new TakenActivations().take(id), undefined);
  });

  t.test('a job the next fetch takes (moveToFinished) carries its activation too', async (t) => {
    const { queue, w, taken, until } = await worker(t, { concurrency: 1 });
    const first = await create();
    const second = await create();
    await queue.addBulk([job(first), job(second)]);
    void w.run();
    await until([first, second]);
    for (const id of [first, second]) t.match(store.taken(taken.get(id) as TakenActivation), { epoch: 1 });
  });

  t.test('with no free slot, another agent or unknown data, the processor activates', async (t) => {
    let ready = false;
    const { queue, w, taken, until } = await worker(t, { ready: () => ready });
    const [busy, other, unknown] = [await create(), await create(), await create()];
    void w.run();
    await queue.add('solo', job(busy).data, job(busy).opts);
    await until([busy]);
    ready = true;
    await queue.add('solo', job(other, { agent: 'other' }).data, job(other).opts);
    await queue.add('solo', job(unknown, { v: 2 }).data, job(unknown).opts);
    await until([other, unknown]);
    for (const id of [busy, other, unknown]) {
      t.equal(taken.get(id), undefined, id);
      t.equal(await redis.hget(keys.invocation(id, id), 'status'), 'queued', 'not activated');
    }
  });

  t.test('an invocation that is gone answers null; a failing ACTIVATE fails the processor', async (t) => {
    const { queue, w, taken, until } = await worker(t);
    const gone = 'inv_gone';
    const broken = await create();
    await redis.del(keys.invocation(broken, broken));
    await redis.set(keys.invocation(broken, broken), 'not a hash'); // HGET fails: WRONGTYPE
    void w.run();
    await queue.addBulk([job(gone), job(broken)]);
    await until([gone, broken]);
    t.equal(taken.get(gone), null);
    t.equal(store.taken(null), undefined, 'gone: nothing to do');
    t.throws(
      () => store.taken(taken.get(broken) as TakenActivation),
      /ACTIVATE in the take of the job failed: .*WRONGTYPE/,
    );
  });

  t.test('a key layout a take cannot fill is refused when the worker is built', async (t) => {
    const bad = { ...keys, invocation: (root: string) => `x:{${root}}:inv` };
    t.throws(
      () =>
        new TakenActivations().attach({ moveToActive: () => undefined }, ['moveToActive'], {
          agent: 'solo',
          runner: 'r1',
          keys: bad,
          react: undefined,
          ready: () => true,
        }),
      /must hold the root id once, then the invocation id once/,
    );
    t.throws(
      () =>
        new TakenActivations().attach({}, ['moveToActive'], {
          agent: 'solo',
          runner: 'r1',
          keys,
          react: undefined,
          ready: () => true,
        }),
      /moveToActive is not defined/,
    );
  });
});
