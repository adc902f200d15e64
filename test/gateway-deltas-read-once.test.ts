// The gateway reads a tree's new entries once, whatever the number of its streams: the event hub's
// XREAD hands what it read to every stream of the tree, and a stream reads Redis itself only to
// catch up (docs/guides/streaming.md#who-watches). No runner: the test writes the deltas itself.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { listenGateway, startMesh } from './support/mesh.js';
import { monitorRedis } from './support/redis-monitor.js';
import { openSse, type SseStream } from './support/sse.js';
import { treeLog } from './support/tree-log.js';

const mesh = await startMesh(t, { agentsYaml: '  chat: {instructions: "@agent chat"}\n', runners: 0 });
const keys = keyLayout(mesh.prefix);
const { queued, delta } = treeLog(mesh);
const cancel = (base: string, id: string) => fetch(`${base}/invocations/${id}`, { method: 'DELETE' });
const contents = (s: SseStream) =>
  s.events.filter((e) => e.event === 'delta').map((e) => e.data.data.content);

t.test('each delta costs the gateway one XREAD however many streams watch its tree', async (t) => {
  const { base } = await listenGateway(t, mesh, {});
  const id = await queued(base);
  const streams = await Promise.all(
    [1, 2, 3].map(() => openSse(`${base}/invocations/${id}/events?deltas=true`)),
  );
  t.teardown(() => {
    for (const s of streams) s.close();
  });
  for (const s of streams) await s.until((e) => e.length === 1, 'the queued status');
  const monitor = await monitorRedis(mesh.redis.port);
  const written: string[] = [];
  // One at a time, each seen by every stream before the next: every delta is a read of its own.
  for (let i = 0; i < 20; i++) {
    written.push(`d${i}`);
    await delta(id, `d${i}`);
    for (const s of streams) await s.until((e) => e.length === i + 2, `delta ${i}`);
  }
  monitor.stop();
  for (const s of streams) t.same(contents(s), written, 'every stream got every delta, in order');
  const xreads = monitor.seen.filter(
    (c) => c.args[0]!.toUpperCase() === 'XREAD' && c.args.includes(keys.deltas(id)),
  );
  // Without the hub's entries handed over, each stream reads each delta again: 4 per delta here.
  t.ok(xreads.length <= written.length + 2, `${xreads.length} XREADs for ${written.length} deltas`);
});

t.test(
  'a stream resumed from an older id catches up from Redis while deltas keep coming, then follows the hub: no gap, no duplicate',
  async (t) => {
    const { base } = await listenGateway(t, mesh, {});
    const id = await queued(base);
    const url = `${base}/invocations/${id}/events?deltas=true`;
    const live = await openSse(url);
    t.teardown(() => live.close());
    await live.until((e) => e.length === 1, 'the queued status');
    const from = live.events[0]!.id;
    const written: string[] = [];
    const write = async (n: number) => {
      for (let i = 0; i < n; i++) {
        written.push(`w${written.length}`);
        await delta(id, written.at(-1)!);
      }
    };
    await write(450); // more than two of a stream's own reads (200 entries each) behind
    const resumed = await openSse(url, { headers: { 'last-event-id': from } });
    t.teardown(() => resumed.close());
    await write(100); // while it catches up
    await write(20);
    await cancel(base, id);
    await Promise.all([live.ended, resumed.ended]);
    t.same(contents(live), written, 'the live stream: every delta once, in order');
    t.same(contents(resumed), written, 'the resumed stream: every delta once, in order');
    t.equal(resumed.events.at(-1)?.data.data.status, 'cancelled', 'and the terminal status');
  },
);
