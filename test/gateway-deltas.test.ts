// Delta streams of a tree (GET /invocations/{id}/events?deltas=true, docs/guides/streaming.md): what
// they send and how they resume, and the gateway reading a tree's new entries once however many
// streams watch it. Each former file's tests are one heading subtest below. Both run on one mesh of
// the same configuration (one agent, no runner: the tests write the runners' deltas themselves, and
// cancel to end a tree); each test streams trees of its own through a gateway of its own.
import { keyLayout } from '@agentmesh/shared';
import t from 'tap';
import { listenGateway, startMesh } from './support/mesh.js';
import { monitorRedis } from './support/redis-monitor.js';
import { openSse, type SseEvent, type SseStream } from './support/sse.js';
import { treeLog } from './support/tree-log.js';
import { waitUntil } from './support/wait-until.js';

const mesh = await startMesh(t, { agentsYaml: '  chat: {instructions: "@agent chat"}\n', runners: 0 });
const keys = keyLayout(mesh.prefix);
const cancel = (base: string, id: string) => fetch(`${base}/invocations/${id}`, { method: 'DELETE' });

// ---------------------------------------------------------------------------------------------------
// GET /invocations/{id}/events?deltas=true (docs/guides/streaming.md, "Watching a tree"): the tree's
// delta stream merged with its structural events by Redis entry id, composite ids that resume both
// with no gap and no duplicate while deltas are kept, the tree's watch flag, and a slow client's
// dropped deltas marked `gap: true` with every structural event intact. No runner: the test writes
// deltas into the tree's delta stream itself (the runners' format), and cancels to end a tree.
t.test(
  'delta streams: merged with the structural events, resumed with no gap, watched, bounded for a slow client',
  async (t) => {
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

    const log = treeLog(mesh);
    const { queued, delta, structural } = log;

    const label = (e: SseEvent) =>
      e.event === 'delta'
        ? `delta:${e.data.data.content}`
        : e.event === 'tool_call'
          ? `tool:${e.data.data.name}`
          : `${e.event}:${e.data.data.status}`;

    /** Reads a stream that must end by itself. */
    async function readAll(url: string, headers: Record<string, string> = {}): Promise<SseEvent[]> {
      const s = await openSse(url, { headers });
      if (s.status !== 200) throw new Error(`${s.status} ${JSON.stringify(s.body)}`);
      await s.ended;
      return s.events;
    }

    t.test('deltas is true or false; anything else is 400 invalid_input', async (t) => {
      const { base } = await listenGateway(t, mesh, {});
      const inv = await queued(base);
      for (const q of ['deltas=bogus', 'deltas=1', 'deltas=TRUE', 'deltas=', 'deltas=true&deltas=false']) {
        const res = await fetch(`${base}/invocations/${inv}/events?${q}`);
        t.equal(res.status, 400, q);
        const body = (await res.json()) as { error: { code: string; details: { path: string }[] } };
        t.equal(body.error.code, 'invalid_input');
        t.same(
          body.error.details.map((d) => d.path),
          ['/deltas'],
        );
      }
    });

    t.test('without deltas=true the stream is as before: no delta, plain ids, no watch flag', async (t) => {
      const { base } = await listenGateway(t, mesh, {});
      const id = await queued(base);
      const open = await openSse(`${base}/invocations/${id}/events?deltas=false`);
      await open.until((e) => e.length === 1, 'the queued status');
      await delta(id, 'unseen');
      await structural(id, 'lookup');
      t.equal(await mesh.client.exists(keys.watch(id)), 0, 'a stream without deltas watches nothing');
      await cancel(base, id);
      await open.ended;
      const plain = (await fetch(`${base}/invocations/${id}/events`)).text();
      t.equal(open.text(), await plain, 'deltas=false is byte for byte the stream without the parameter');
      t.same(open.events.map(label), ['status:queued', 'tool:lookup', 'status:cancelled']);
      t.ok(
        open.events.every((e) => /^\d+-\d+$/.test(e.id)),
        'ids are the log entry ids',
      );
    });

    t.test(
      'a fresh delta stream merges deltas from now with the structural events, in entry id order',
      async (t) => {
        const { base } = await listenGateway(t, mesh, {});
        const id = await queued(base);
        const before = await delta(id, 'before');
        const s = await openSse(`${base}/invocations/${id}/events?deltas=true`);
        t.teardown(() => s.close());
        await s.until((e) => e.length === 1, 'the queued status');
        const [queuedId] = (await mesh.client.xrange(keys.events(id), '-', '+')).map(([entry]) => entry);
        t.equal(
          s.events[0]!.id,
          `${queuedId}_${before}`,
          'the first id: its log entry and the last delta at open',
        );
        const d1 = await delta(id, 'one');
        const d2 = await delta(id, 'two');
        const elsewhere = await delta(id, 'elsewhere', { of: 'inv_0123456789abcdef0123456789abcdef' });
        const e1 = await structural(id, 'lookup');
        const d3 = await delta(id, 'three');
        await s.until((e) => e.length === 5, 'three deltas and the tool call');
        await cancel(base, id);
        await s.ended;
        t.same(s.events.map(label), [
          'status:queued',
          'delta:one',
          'delta:two',
          'tool:lookup',
          'delta:three',
          'status:cancelled',
        ]);
        // Written in an earlier millisecond, the other tree's delta is passed before the structural
        // event. Written in the same one, their ids may tie or even cross (each stream counts its own
        // sequence), and the one read first is passed first (tree-stream.ts): either position holds.
        const ms = (entry: string) => Number(entry.split('-')[0]);
        const passed = ms(elsewhere) < ms(e1) ? [elsewhere] : [d2, elsewhere];
        const ids = s.events.slice(1, 5).map((e) => e.id);
        t.same(
          [ids[0], ids[1], ids[3]],
          [`${queuedId}_${d1}`, `${queuedId}_${d2}`, `${e1}_${d3}`],
          'each id is the position after the event in both streams',
        );
        t.ok(
          passed.some((x) => ids[2] === `${e1}_${x}`),
          `the structural event's id passes the other tree's delta unless it was written in the same millisecond (${ids[2]})`,
        );
        t.same(s.events[1]!.data.data, { callId: 'c1', seq: s.events[1]!.data.data.seq, content: 'one' });
        t.equal(s.events[1]!.data.type, 'delta');
        t.ok(s.complete(), 'it ended after the terminal status');
      },
    );

    t.test('Last-Event-ID resumes both streams with no gap and no duplicate, from any event', async (t) => {
      const { base } = await listenGateway(t, mesh, {});
      const id = await queued(base);
      const s = await openSse(`${base}/invocations/${id}/events?deltas=true`);
      t.teardown(() => s.close());
      await s.until((e) => e.length === 1, 'the queued status');
      for (let i = 0; i < 5; i++) {
        await delta(id, `a${i}`);
        if (i % 2 === 0) await structural(id, `t${i}`);
      }
      await cancel(base, id);
      await s.ended;
      const whole = s.events;
      t.equal(whole.length, 10, 'queued, five deltas, three tool calls, cancelled');
      const url = `${base}/invocations/${id}/events?deltas=true`;
      for (let k = 0; k < whole.length; k++) {
        const resumed = await readAll(url, { 'last-event-id': whole[k]!.id });
        // The same events, none missing and none twice. Entries of the two streams written in the same
        // millisecond have ids that tie, and either order of a tie is a true interleaving: a live read
        // gives them as they came, a resumed one reads both at once.
        t.same(
          resumed.map(label).sort(),
          whole
            .slice(k + 1)
            .map(label)
            .sort(),
          `after event ${k} (${label(whole[k]!)})`,
        );
        const parts = resumed.map((e) => e.id.split('_').map((p) => p.split('-').map(Number)));
        t.ok(
          parts.every(
            (p, i) =>
              i === 0 ||
              p.every(([ms, seq], j) => {
                const [pms, pseq] = parts[i - 1]![j]!;
                return ms! > pms! || (ms === pms && seq! >= pseq!);
              }),
          ),
          `after event ${k}: both positions only move forward`,
        );
      }
      const plainId = whole[2]!.id.split('_')[0]!;
      t.same(
        (await readAll(url, { 'last-event-id': plainId })).map(label),
        whole
          .slice(3)
          .filter((e) => e.event !== 'delta')
          .map(label),
        'a plain id resumes the structural events; deltas from now (none came since)',
      );
      t.same(
        (await readAll(url)).map(label),
        whole.filter((e) => e.event !== 'delta').map(label),
        'a fresh open sends no delta from before it',
      );
    });

    t.test(
      'deltas trimmed away since the client left resume from now, the structural events in full',
      async (t) => {
        const { base } = await listenGateway(t, mesh, {});
        const id = await queued(base);
        const s = await openSse(`${base}/invocations/${id}/events?deltas=true`);
        t.teardown(() => s.close());
        await s.until((e) => e.length === 1, 'the queued status');
        await delta(id, 'seen');
        await s.until((e) => e.length === 2, 'the queued status and a delta');
        s.close();
        const last = s.events.at(-1)!.id;
        for (let i = 0; i < 4; i++) await delta(id, `missed${i}`, { maxlen: 2 });
        await structural(id, 'lookup');
        await cancel(base, id);
        const resumed = await readAll(`${base}/invocations/${id}/events?deltas=true`, {
          'last-event-id': last,
        });
        t.same(
          resumed.map(label),
          ['tool:lookup', 'status:cancelled'],
          'no delta of a stream trimmed past the client',
        );
        const kept = await readAll(`${base}/invocations/${id}/events?deltas=true`, {
          'last-event-id': `${last.split('_')[0]}_${(await mesh.client.xrange(keys.deltas(id), '-', '+'))[0]![0]}`,
        });
        // (The delta and the tool call may share a millisecond: their order is then the streams'.)
        t.same(
          kept.map(label).sort(),
          ['delta:missed3', 'status:cancelled', 'tool:lookup'],
          'while kept, deltas resume',
        );
        t.equal(kept.at(-1)!.event, 'status');
      },
    );

    t.test(
      "a delta stream sets the tree's watch flag for 30 s; it is refreshed while one is open, then left to expire",
      async (t) => {
        const { base } = await listenGateway(t, mesh, { watchRefreshMs: 100 });
        const id = await queued(base);
        const watch = keys.watch(id);
        const a = await openSse(`${base}/invocations/${id}/events?deltas=true`);
        const b = await openSse(`${base}/invocations/${id}/events?deltas=true`);
        t.teardown(() => {
          a.close();
          b.close();
        });
        await b.until((e) => e.length === 1, 'the queued status');
        const ttl = await mesh.client.pttl(watch);
        t.ok(ttl > 20_000 && ttl <= 30_000, `set with a 30 s TTL (${ttl} ms left)`);
        a.close();
        await mesh.client.del(watch);
        await waitUntil(
          async () => (await mesh.client.exists(watch)) === 1,
          10_000,
          () => 'the flag to be set again',
        );
        t.pass('with one stream still open the flag is refreshed');
        b.close();
        await waitUntil(
          async () => {
            await mesh.client.del(watch);
            await sleep(500);
            return (await mesh.client.exists(watch)) === 0;
          },
          20_000,
          () => 'the refreshes to stop',
        );
        t.pass('after the last stream closed nothing sets it again');
      },
    );

    t.test('a delta stream watches its own tree only', async (t) => {
      const { base } = await listenGateway(t, mesh, {});
      const [x, y] = [await queued(base), await queued(base)];
      const s = await openSse(`${base}/invocations/${x}/events?deltas=true`);
      t.teardown(() => s.close());
      await s.until((e) => e.length === 1, 'the queued status');
      t.equal(await mesh.client.exists(keys.watch(x)), 1);
      t.equal(await mesh.client.exists(keys.watch(y)), 0, 'only the tree streamed is watched');
    });

    t.test(
      "a slow client's deltas are dropped past its buffer bound and the next says gap: true; structural events all arrive",
      async (t) => {
        const { base } = await listenGateway(t, mesh, {
          streamBufferBytes: 64 * 1024,
          slowClientMs: 120_000,
        });
        const id = await queued(base);
        const s = await openSse(`${base}/invocations/${id}/events?deltas=true`);
        t.teardown(() => s.close());
        await s.until((e) => e.length === 1, 'the queued status');
        s.pause();
        const chunk = 'x'.repeat(32 * 1024);
        const first = log.seq;
        // 16 MiB: more than the kernel's socket buffers and the gateway's bound hold.
        for (let i = 0; i < 512; i++) {
          await delta(id, `${i}:${chunk}`);
          if (i % 128 === 127) await structural(id, `t${i}`);
        }
        s.resume();
        // The gateway keeps pace with the writes, so the deltas dropped may be the last it had: once the
        // client has read all it holds, one more delta goes out, and says so.
        await s.until(
          (e) => e.some((x) => x.event === 'tool_call' && x.data.data.name === 't511'),
          'the last tool call',
        );
        await delta(id, 'after');
        await cancel(base, id);
        await s.ended;
        t.ok(s.complete(), 'the stream ended after the terminal status');
        t.same(
          s.events.filter((e) => e.event !== 'delta').map(label),
          ['status:queued', 'tool:t127', 'tool:t255', 'tool:t383', 'tool:t511', 'status:cancelled'],
          'every structural event, in order',
        );
        const deltas = s.events.filter((e) => e.event === 'delta');
        t.ok(deltas.length < 513, `some deltas were dropped (${deltas.length} of 513 arrived)`);
        let previous = first - 1;
        let gaps = 0;
        for (const d of deltas) {
          const missed = d.data.data.seq !== previous + 1;
          if (missed !== (d.data.data.gap === true))
            t.fail(`seq ${d.data.data.seq} after ${previous}: gap ${d.data.data.gap}`);
          if (missed) gaps++;
          previous = d.data.data.seq;
        }
        t.ok(gaps > 0, `a delta after dropped ones says gap: true (${gaps} gaps)`);
        const structuralIds = s.events.map((e) => e.id);
        t.same([...structuralIds].sort(), structuralIds, 'ids still grow');
      },
    );

    t.test(
      'a client that cannot take even the structural events is disconnected and resumes with Last-Event-ID',
      async (t) => {
        const { base } = await listenGateway(t, mesh, { streamBufferBytes: 64 * 1024, slowClientMs: 300 });
        const id = await queued(base);
        const s = await openSse(`${base}/invocations/${id}/events?deltas=true`);
        t.teardown(() => s.close());
        await s.until((e) => e.length === 1, 'the queued status');
        s.pause();
        const chunk = 'y'.repeat(32 * 1024);
        for (let i = 0; i < 512; i++) await delta(id, `${i}:${chunk}`);
        // Larger than what the bound leaves free past the last delta written: it has to wait.
        await structural(id, 'after', 'z'.repeat(48 * 1024));
        await sleep(1500);
        await cancel(base, id);
        s.resume();
        await s.ended;
        t.notOk(s.complete(), 'the gateway cut the stream');
        t.notOk(
          s.events.some((e) => e.event === 'status' && e.data.data.status === 'cancelled'),
          'it had not reached the end',
        );
        const resumed = await readAll(`${base}/invocations/${id}/events?deltas=true`, {
          'last-event-id': s.events.at(-1)!.id,
        });
        const structurals = [...s.events, ...resumed].filter((e) => e.event !== 'delta').map(label);
        t.same(
          structurals,
          ['status:queued', 'tool:after', 'status:cancelled'],
          'no structural event lost, none twice',
        );
      },
    );

    t.test(
      'a delta stream whose Last-Event-ID lies at or past the terminal event ends at once',
      async (t) => {
        const { base } = await listenGateway(t, mesh, {});
        const id = await queued(base);
        await delta(id, 'late');
        await cancel(base, id);
        const url = `${base}/invocations/${id}/events?deltas=true`;
        const whole = await readAll(url);
        t.same(whole.map(label), ['status:queued', 'status:cancelled']);
        t.same(await readAll(url, { 'last-event-id': whole.at(-1)!.id }), [], 'at the terminal event');
        t.same(await readAll(url, { 'last-event-id': '99999999999999-0_0-0' }), [], 'past it');
        t.equal(await mesh.client.exists(keys.watch(id)), 1, 'a delta stream that opened watched the tree');
      },
    );
  },
);

// ---------------------------------------------------------------------------------------------------
// The gateway reads a tree's new entries once, whatever the number of its streams: the event hub's
// XREAD hands what it read to every stream of the tree, and a stream reads Redis itself only to
// catch up (docs/guides/streaming.md#who-watches). No runner: the test writes the deltas itself.
t.test("the gateway reads a tree's new entries once, whatever the number of its streams", async (t) => {
  const { queued, delta } = treeLog(mesh);
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
});
