// The gateway's Redis-side parts, each on a Redis of its own and with no runner (so the stock-queue
// tier, scripts/stock-queue-tests.mjs, leaves this file out): the event hub that reads the trees'
// streams for every watcher, the keeper of the trees' watch flags, and a gateway whose Redis goes
// down and comes back. Each former file's tests are one heading subtest below.
import { AsyncLocalStorage } from 'node:async_hooks';
import net from 'node:net';
import { buildGateway } from '@agentmesh/gateway';
import { type AgentPlan, keyLayout, parseConfig, queueName } from '@agentmesh/shared';
import { connectRedis, meshScripts, SessionStore } from '@agentmesh/shared/redis';
import { publishCatalogue } from '@agentmesh/tool-host';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import t from 'tap';
import { EventHub } from '../services/gateway/src/events/event-hub.js';
import { WatchKeeper } from '../services/gateway/src/events/watch-keeper.js';
import { InvocationService } from '../services/gateway/src/invocations/invocation-service.js';
import { Waiters } from '../services/gateway/src/invocations/waiters.js';
import { monitorRedis } from './support/redis-monitor.js';
import { startRedis, startRedisClient } from './support/redis-server.js';
import { waitUntil } from './support/wait-until.js';

// ---------------------------------------------------------------------------------------------------
// The event hub (services/gateway/src/events/event-hub.ts): one blocking XREAD per Redis server for
// every watched key; a watcher hears of its key's new entries in its own async context, and a key
// watched while the reader blocks is read at once.
t.test('the event hub: each watcher hears of its entries in its own context, and at once', async (t) => {
  t.test(
    'a watcher hears of new entries in its own async context, not that of the watcher that started the reader',
    async (t) => {
      const redis = await startRedis();
      t.teardown(() => redis.stop());
      const commands = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null });
      t.teardown(() => commands.disconnect());
      const hub = new EventHub(
        connectRedis({ url: redis.url }, { maxRetriesPerRequest: null }),
        commands,
        200,
      );
      t.teardown(() => hub.close());
      hub.start();
      // Stands for the trace context of each request (an event stream) that watches a key.
      const request = new AsyncLocalStorage<string>();
      const heard: string[] = [];
      const listen = (req: string, key: string) =>
        request.run(req, () => hub.watch(key, () => heard.push(`${key} in ${request.getStore()}`)));
      // The first watch starts the reader's loop, inside request a.
      const stops = [await listen('a', 'events-a'), await listen('b', 'events-b')];
      t.teardown(() => {
        for (const stop of stops) stop();
      });
      await commands.xadd('events-b', '*', 'e', '1');
      await waitUntil(
        async () => heard.length > 0,
        10_000,
        () => 'the watcher of events-b to hear of its entry',
      );
      t.same(heard, ['events-b in b']);
    },
  );

  t.test(
    'a key watched right after another (a delta stream watches two) is read at once, not after a whole block',
    async (t) => {
      const redis = await startRedis();
      t.teardown(() => redis.stop());
      const commands = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null });
      t.teardown(() => commands.disconnect());
      // A block far longer than the wait below: hearing of the entry cannot be the block timing out.
      const hub = new EventHub(
        connectRedis({ url: redis.url }, { maxRetriesPerRequest: null }),
        commands,
        120_000,
      );
      t.teardown(() => hub.close());
      hub.start();
      const heard: string[] = [];
      const stops = [
        await hub.watch('tree-events', () => heard.push('events')),
        await hub.watch('tree-deltas', () => heard.push('deltas')),
      ];
      t.teardown(() => {
        for (const stop of stops) stop();
      });
      await commands.xadd('tree-deltas', '*', 'e', '1');
      await waitUntil(
        async () => heard.includes('deltas'),
        30_000,
        () => 'the watcher of the second key to hear of its entry',
      );
      t.same(heard, ['deltas']);
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// The watch flag of a tree (docs/guides/streaming.md, "Watching a tree"): one refresh timer per
// tree however many delta streams of it a gateway holds, and none once the last is released.
t.test('the watch keeper: one refresh timer per tree, none once the last holder releases it', async (t) => {
  t.test(
    'three holders of one tree set its flag once and refresh it with one timer; released, it is left to expire',
    async (t) => {
      const redis = await startRedis();
      t.teardown(() => redis.stop());
      const client = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null });
      t.teardown(() => client.disconnect());
      const keys = keyLayout('mesh');
      const root = 'inv_0123456789abcdef0123456789abcdef';
      // A refresh every 1 s: the 500 ms looked at after the first one holds no other tick.
      const watches = new WatchKeeper(client, keys, 30_000, 1000);
      t.teardown(() => watches.close());
      const monitor = await monitorRedis(redis.port);
      t.teardown(() => monitor.stop());
      const sets = () =>
        monitor.seen.filter((c) => c.args[0]?.toUpperCase() === 'SET' && c.args[1] === keys.watch(root));
      const releases: (() => void)[] = await Promise.all([
        watches.hold(root),
        watches.hold(root),
        watches.hold(root),
      ]);
      t.equal(watches.size, 1, 'one tree');
      t.ok((await client.pttl(keys.watch(root))) > 20_000, 'set when the holds resolve');
      // A stream of an invocation its invoke held since before the launch holds it a fourth time.
      releases.push(await watches.hold(root));
      await waitUntil(
        async () => sets().length >= 1,
        10_000,
        () => 'the holds to set the flag',
      );
      t.equal(sets().length, 1, 'one SET for the four holds: a tree held already is not set again');
      t.same(sets()[0]!.args.slice(2), ['1', 'PX', '30000'], 'SET key 1 PX 30000');
      await waitUntil(
        async () => sets().length >= 2,
        10_000,
        () => 'the first refresh',
      );
      await new Promise((r) => setTimeout(r, 500));
      t.equal(sets().length, 2, 'one refresh per tick, not one per holder');
      for (const release of releases.slice(0, 3)) release();
      t.equal(watches.size, 1, 'held while one holder is left');
      releases[3]!();
      t.equal(watches.size, 0, 'released by the last');
      const seen = sets().length;
      // A timer left running would tick within 1 s: 1.5 s holds at least one of its ticks.
      await new Promise((r) => setTimeout(r, 1500));
      t.equal(sets().length, seen, 'no refresh after the last release');
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// What a caller writes before a fresh invocation is launched (an invoke stream's watch flag) goes out
// ahead of the invocation's writes on their connection: the create does not wait for its answer,
// and fails (taken back, nothing left) when it fails, at once or later.
t.test(
  "a fresh invocation's launch does not wait on what beforeLaunch wrote, and fails with it",
  async (t) => {
    const client = await startRedisClient(t);
    const subscriber = client.duplicate();
    t.teardown(() => subscriber.disconnect());
    const keys = keyLayout('mesh');
    const queue = new Queue(queueName('chat'), { connection: client, prefix: keys.bullPrefix });
    const waiters = new Waiters(subscriber, keys.doneChannel());
    await waiters.start();
    const service = new InvocationService(
      client,
      meshScripts(client),
      keys,
      new Map([['chat', queue]]),
      waiters,
      60,
      new SessionStore(client, keys, 3600),
    );
    const agent = { name: 'chat', definitionHash: 'h' } as unknown as AgentPlan;
    const exists = (id: string) => async () => (await client.exists(keys.invocation(id, id))) === 1;
    const ids: string[] = [];
    // Answers only once the invocation exists: a launch that waited for it would never come.
    const beforeLaunch = async (id: string) => {
      ids.push(id);
      await waitUntil(exists(id), 10_000, () => 'the invocation, created without waiting for beforeLaunch');
    };
    const view = await service.start(agent, { prompt: 'x' }, { timeoutMs: 60_000, waitMs: 0, beforeLaunch });
    t.equal(view.status, 'queued');
    t.ok(await queue.getJob(view.id), 'its job was added');

    await t.rejects(
      service.start(
        agent,
        { prompt: 'y' },
        {
          timeoutMs: 60_000,
          waitMs: 0,
          beforeLaunch: async (id) => {
            await beforeLaunch(id);
            throw new Error('the watch flag could not be set');
          },
        },
      ),
      { code: 'unavailable' },
    );
    const failed = ids[1]!;
    t.equal(await client.exists(keys.invocation(failed, failed)), 0, 'the invocation was taken back');
    t.notOk(await queue.getJob(failed), 'and its job');

    // One that fails at once, before a session's create (which reads first) takes it up: an answer,
    // not an unhandled rejection.
    await t.rejects(
      service.start(
        agent,
        { prompt: 'z' },
        {
          timeoutMs: 60_000,
          waitMs: 0,
          session: { id: 'conversation', multitask: 'enqueue' },
          beforeLaunch: () => Promise.reject(new Error('the watch flag could not be set')),
        },
      ),
      { code: 'unavailable' },
    );
    await queue.close();
  },
);

// ---------------------------------------------------------------------------------------------------
// With its Redis gone the gateway stays alive, says why it is not ready, and answers 503
// `unavailable` (retryable) rather than a 500; after a Redis restart it serves again.
t.test('a gateway whose Redis is down stays alive, answers 503 unavailable, and recovers', async (t) => {
  t.test('a gateway whose Redis is down answers 503 unavailable, and recovers from a restart', async (t) => {
    const redis = await startRedis();
    t.teardown(() => redis.stop());
    const config = parseConfig(
      `models:
  default: {provider: openai, baseUrl: 'http://127.0.0.1:9/v1', apiKey: k, model: fake}
tools: []
agents:
  alpha:
    description: First.
    instructions: "@agent alpha"
`,
      '/test/mesh.yaml',
      {},
      'yaml',
    );
    const client = new Redis(redis.url, { maxRetriesPerRequest: null, lazyConnect: true });
    await client.connect();
    await publishCatalogue(client, keyLayout('mesh'), []);
    client.disconnect();
    const gateway = await buildGateway({
      config,
      redisUrl: redis.url,
      prefix: 'mesh',
      defaultTimeoutSeconds: 60,
      retentionSeconds: 3600,
    });
    t.teardown(() => gateway.close());
    await gateway.app.ready();
    const request = async (method: 'GET' | 'POST', url: string) => {
      const res = await gateway.app.inject({
        method,
        url,
        ...(method === 'POST' ? { payload: { prompt: 'hi' } } : {}),
      });
      return { status: res.statusCode, json: res.json() };
    };
    const unknownId = '/invocations/inv_0123456789abcdef0123456789abcdef';
    t.equal((await request('GET', unknownId)).status, 404);

    // A restarted Redis (connections cut, data gone) is reconnected to.
    await redis.restart();
    for (;;) {
      const res = await request('GET', unknownId);
      if (res.status === 404) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const ready = await request('GET', '/readyz');
    t.equal(
      ready.json.error.message,
      'Not ready: no live runner hosts agent alpha.',
      'only the runner is missing now',
    );
    await redis.stop();
    // Hold the port: under parallel test files another redis-server could otherwise start on it and
    // the gateway would reconnect to that one.
    const squatter = net.createServer((socket) => socket.destroy());
    await new Promise<void>((r) => squatter.listen(redis.port, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => squatter.close(() => r())));
    for (;;) {
      const res = await request('GET', '/readyz');
      if (res.json.error?.message === 'Not ready: Redis is unreachable.') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    t.equal((await request('GET', '/healthz')).status, 200, 'still alive');
    const unavailable = { error: { code: 'unavailable', message: 'Redis is unreachable; try again later.' } };
    const invoke = await request('POST', '/agents/alpha/invoke');
    t.equal(invoke.status, 503);
    t.strictSame(invoke.json, unavailable);
    const read = await request('GET', unknownId);
    t.equal(read.status, 503);
    t.strictSame(read.json, unavailable);
  });
});
