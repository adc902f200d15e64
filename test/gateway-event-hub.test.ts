import { AsyncLocalStorage } from 'node:async_hooks';
import { connectRedis } from '@agentmesh/shared/redis';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import t from 'tap';
import { EventHub } from '../services/gateway/src/events/event-hub.js';

t.test(
  'a watcher hears of new entries in its own async context, not that of the watcher that started the reader',
  async (t) => {
    const redis = await startRedis();
    t.teardown(() => redis.stop());
    const commands = connectRedis({ url: redis.url }, { maxRetriesPerRequest: null });
    t.teardown(() => commands.disconnect());
    const hub = new EventHub(connectRedis({ url: redis.url }, { maxRetriesPerRequest: null }), commands, 200);
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
