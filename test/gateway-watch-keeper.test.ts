// The watch flag of a tree (docs/guides/streaming.md, "Watching a tree"): one refresh timer per
// tree however many delta streams of it a gateway holds, and none once the last is released.
import { keyLayout } from '@agentmesh/shared';
import { connectRedis } from '@agentmesh/shared/redis';
import { monitorRedis } from '@agentmesh/test-support/redis-monitor';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import t from 'tap';
import { WatchKeeper } from '../services/gateway/src/events/watch-keeper.js';

t.test(
  'three holders of one tree refresh its flag with one timer; released, it is left to expire',
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
    const releases = await Promise.all([watches.hold(root), watches.hold(root), watches.hold(root)]);
    t.equal(watches.size, 1, 'one tree');
    await waitUntil(
      async () => sets().length >= 3,
      10_000,
      () => 'the three holds to set the flag',
    );
    t.same(sets()[0]!.args.slice(2), ['1', 'PX', '30000'], 'SET key 1 PX 30000');
    t.ok((await client.pttl(keys.watch(root))) > 20_000);
    await waitUntil(
      async () => sets().length >= 4,
      10_000,
      () => 'the first refresh',
    );
    await new Promise((r) => setTimeout(r, 500));
    t.equal(sets().length, 4, 'one refresh per tick, not one per holder');
    releases[0]!();
    releases[1]!();
    t.equal(watches.size, 1, 'held while one holder is left');
    releases[2]!();
    t.equal(watches.size, 0, 'released by the last');
    const seen = sets().length;
    // A timer left running would tick within 1 s: 1.5 s holds at least one of its ticks.
    await new Promise((r) => setTimeout(r, 1500));
    t.equal(sets().length, seen, 'no refresh after the last release');
  },
);
