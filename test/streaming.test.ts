// Model-call deltas through the real mesh (docs/guides/streaming.md): what runners publish to a tree's
// delta stream and when, the placement every event carries, and a call's first piece sent at once.
// Each former file's tests are one heading subtest below, each mesh started inside it and stopped
// at its end, with its helpers.
import { keyLayout } from '@agentmesh/shared';
import t, { type Test } from 'tap';
import { brokenAttempt, isFirstAttempt } from './support/broken-stream.js';
import { type FakeScript, turnOf } from './support/fake-model.js';
import { listen, startMesh, type TestMesh } from './support/mesh.js';
import { monitorRedis } from './support/redis-monitor.js';
import { openSse, type SseEvent } from './support/sse.js';
import { waitUntil } from './support/wait-until.js';

// ---------------------------------------------------------------------------------------------------
// Runners publish a model call's deltas to its tree's delta stream only while the tree is watched
// (its `watch` key set, here by the test as the gateway would), coalesced, and adding up to the
// recorded reply; every event of a tree carries its placement (docs/guides/streaming.md).
t.test(
  "deltas reach a tree's delta stream only while it is watched; every event carries its placement",
  async (t) => {
    /** Every event of a stream, parsed, with its Redis id. */
    async function entries(mesh: TestMesh, key: string): Promise<any[]> {
      const raw = (await mesh.client.xrange(key, '-', '+')) as [string, string[]][];
      return raw.map(([id, fields]) => ({ id, ...JSON.parse(fields[1]!) }));
    }

    /** A call's deltas since its last reset, added up as a reader would. */
    function assemble(deltas: any[]) {
      const from = deltas.findLastIndex((d) => d.data.reset);
      let content: string | null = null;
      const calls = new Map<number, { id: string; name: string; arguments: string }>();
      for (const d of deltas.slice(Math.max(0, from))) {
        if (d.data.content !== undefined) content = (content ?? '') + d.data.content;
        for (const c of d.data.toolCalls ?? []) {
          const call = calls.get(c.index) ?? { id: '', name: '', arguments: '' };
          if (c.id) call.id = c.id;
          if (c.name) call.name = c.name;
          call.arguments += c.arguments ?? '';
          calls.set(c.index, call);
        }
      }
      return { content, toolCalls: [...calls.entries()].sort((a, b) => a[0] - b[0]).map(([, c]) => c) };
    }

    const LONG = Array.from({ length: 2000 }, (_, i) => `w${i} `).join('');

    t.test(
      'deltas reach Redis only while the tree is watched, coalesced, adding up to the recorded replies',
      async (t) => {
        let release: (() => void) | undefined;
        let held = false;
        const mesh = await startMesh(t, {
          tools: [
            {
              name: 'hold',
              description: 'Waits until the test lets it go.',
              input: { type: 'object', properties: {} },
              run: () => {
                held = true;
                return release ? new Promise<string>((r) => (release = () => r('released'))) : 'at once';
              },
            },
            {
              name: 'echo',
              description: 'Echoes.',
              input: { type: 'object', properties: { text: { type: 'string' } } },
              run: (args: unknown) => JSON.stringify(args),
            },
          ],
          agentsYaml: `
  writer: {instructions: "@agent writer", tools: [hold, echo]}
`,
          script: (r) => {
            const turn = turnOf(r);
            if (turn === 0) return { calls: [{ name: 'hold' }] };
            if (turn === 1) {
              return {
                content: 'Echoing — “ü” 😀',
                calls: [{ name: 'echo', args: { text: 'x'.repeat(9000) } }],
                chunks: 400,
              };
            }
            return { final: LONG, chunks: 2000 };
          },
        });
        const keys = keyLayout(mesh.prefix);

        const monitor = await monitorRedis(mesh.redis.port);
        const unwatched = await mesh.invoke('writer', { prompt: 'go' });
        monitor.stop();
        t.equal(unwatched.json.status, 'succeeded');
        const streamKeys = [keys.deltas(unwatched.json.id), keys.watch(unwatched.json.id)];
        // Each command on those keys, a Lua step's own included (MONITOR shows them one by one);
        // not the steps themselves, which name the watch key to read it (ACTIVATE).
        const touching = monitor.seen.filter(
          (c) => c.args.some((a) => streamKeys.includes(a)) && !/^EVAL/i.test(c.args[0]!),
        );
        t.ok(touching.length > 0, 'the runner read whether the tree is watched');
        t.strictSame(
          [...new Set(touching.map((c) => c.args[0]!.toUpperCase()))],
          ['EXISTS'],
          'and wrote nothing: its only commands on those keys are reads',
        );
        t.equal(await mesh.client.exists(keys.deltas(unwatched.json.id)), 0, 'no delta of an unwatched tree');

        release = () => undefined; // the next run's hold waits for the test
        held = false;
        const started = await mesh.invoke('writer', { prompt: 'go' }, 'wait=0');
        const id = started.json.id as string;
        await waitUntil(
          async () => held,
          20_000,
          () => 'the hold tool called',
        );
        await mesh.client.set(keys.watch(id), '1', 'PX', 30_000);
        // A runner checks the watch key at most once a second per tree: let its cached "unwatched" lapse.
        await new Promise((r) => setTimeout(r, 1100));
        release();
        const done = await mesh.waitForStatus(id, 'succeeded', 30_000);
        t.equal(done.output, LONG);

        const deltas = (await entries(mesh, keys.deltas(id))).filter((e) => e.type === 'delta');
        const records = await mesh.client.hgetall(keys.calls(id, id));
        const byCall = (callId: string) => deltas.filter((d) => d.data.callId === callId);
        t.same(byCall('t0-model'), [], 'the call made before anyone watched published nothing');
        for (const callId of ['t1-model', 't2-model']) {
          const mine = byCall(callId);
          const reply = JSON.parse(records[callId]!).reply;
          t.ok(mine.length > 0, `${callId} published deltas`);
          t.same(
            mine.map((d) => d.data.seq),
            mine.map((_, i) => i),
            'seq counts 0, 1, 2… in stream order',
          );
          t.notOk(
            mine.some((d) => d.data.reset),
            'a call issued once has no reset',
          );
          t.strictSame(
            assemble(mine),
            { content: reply.content, toolCalls: reply.toolCalls },
            `${callId}: the deltas add up to the recorded reply`,
          );
          t.match(mine[0], { invocationId: id, agent: 'writer', type: 'delta', rootId: id, depth: 0 });
        }
        const final = byCall('t2-model');
        t.ok(final.length <= 2000 / 20, `2,000 chunks went out as ${final.length} deltas`);
        t.ok((await mesh.client.pttl(keys.deltas(id))) > 0, 'the delta stream expires');
      },
    );

    t.test('every event of a tree carries rootId, depth and, below the root, parentCallId', async (t) => {
      const mesh = await startMesh(t, {
        agentsYaml: `
  boss: {instructions: "@agent boss", subagents: [helper]}
  helper: {description: Helps., instructions: "@agent helper", subagents: [leaf]}
  leaf: {description: Leaf., instructions: "@agent leaf"}
`,
        script: (r) => {
          if (r.agent === 'leaf') return { final: 'leaf answer' };
          const sub = r.agent === 'boss' ? '_subagent_helper' : '_subagent_leaf';
          return turnOf(r) === 0
            ? { calls: [{ name: sub, args: { prompt: 'x' } }] }
            : { final: `${r.agent} done` };
        },
      });
      const res = await mesh.invoke('boss', { prompt: 'go' });
      t.equal(res.json.status, 'succeeded');
      const root = res.json.id as string;
      const events = await entries(mesh, keyLayout(mesh.prefix).events(root));
      // Who started whom: each delegation_started names the child and the parent's call.
      const placement = new Map<string, { depth: number; parentCallId?: string }>([[root, { depth: 0 }]]);
      for (const e of events.filter((e) => e.type === 'delegation_started')) {
        const parent = placement.get(e.invocationId)!;
        placement.set(e.data.childId, { depth: parent.depth + 1, parentCallId: e.data.callId });
      }
      t.equal(placement.size, 3, 'three nodes');
      const types = new Set(events.map((e) => e.type));
      for (const type of ['status', 'model_call', 'delegation_started', 'delegation_finished', 'output']) {
        t.ok(types.has(type), `the tree has ${type} events`);
      }
      for (const e of events) {
        const where = placement.get(e.invocationId)!;
        const label = `${e.type} of ${e.agent} (${e.data.status ?? ''})`;
        t.equal(e.rootId, root, `${label}: rootId`);
        t.equal(e.depth, where.depth, `${label}: depth`);
        t.equal(e.parentCallId, where.parentCallId, `${label}: parentCallId`);
      }
    });
  },
);

// ---------------------------------------------------------------------------------------------------
// A model call's first piece goes out at once, as a delta of its own, so a watcher sees the reply
// begin without waiting MESH_DELTA_FLUSH_MS; the pieces after it are coalesced as before, and a
// retried attempt's first piece goes out at once again (docs/guides/streaming.md).
t.test("a model call's first piece goes out at once, as a delta of its own", async (t) => {
  const PIECES = 40;
  const ANSWER = Array.from({ length: PIECES }, (_, i) => `p${String(i).padStart(2, '0')} `).join('');
  const FIRST = ANSWER.slice(0, ANSWER.length / PIECES); // the fake model cuts the text evenly

  // Every piece of an answer comes in one write: all of them arrive within one flush window.
  const script: FakeScript = (r) => {
    // The first attempt breaks off mid-stream (retried like a 5xx) after two pieces of its own.
    if (r.agent === 'flaky' && isFirstAttempt(mesh.model, r)) return brokenAttempt(100);
    return { final: ANSWER, chunks: PIECES };
  };

  const mesh = await startMesh(t, {
    agentsYaml: `
  opener: {instructions: "@agent opener"}
  flaky: {instructions: "@agent flaky"}
`,
    script,
  });
  const base = await listen(mesh);

  /** The delta events an invoke stream of `agent` carried, once it ended. */
  async function deltasOf(t: Test, agent: string): Promise<SseEvent['data'][]> {
    const s = await openSse(`${base}/agents/${agent}/invoke?stream=true`, {
      method: 'POST',
      body: { prompt: 'go' },
    });
    t.teardown(() => s.close());
    await s.ended;
    t.ok(s.complete(), `${agent}: the stream ended after the root's terminal status`);
    return s.events.filter((e) => e.event === 'delta').map((e) => e.data.data);
  }

  t.test("a call's first piece is a delta of its own; the pieces after it are coalesced", async (t) => {
    const deltas = await deltasOf(t, 'opener');
    t.strictSame(
      deltas.map((d) => d.seq),
      deltas.map((_, i) => i),
    );
    t.equal(deltas[0]?.content, FIRST, 'the first delta is exactly the first piece');
    t.ok(
      deltas.length >= 2 && deltas.length < PIECES,
      `the other pieces came as ${deltas.length - 1} delta(s)`,
    );
    t.equal(deltas.map((d) => d.content).join(''), ANSWER, 'the deltas add up to the reply');
  });

  t.test("a retried attempt's first piece goes out at once too, with reset", async (t) => {
    const deltas = await deltasOf(t, 'flaky');
    const retry = deltas.findLastIndex((d) => d.reset);
    t.ok(retry > 0, 'the failed attempt published deltas before the retry reset them');
    t.equal(deltas[0]?.content, 'draft', "the failed attempt's first piece went out alone");
    t.match(deltas[retry], { seq: 0, reset: true }, 'the retry starts its deltas over');
    t.equal(deltas[retry]?.content, FIRST, "the retry's first delta is exactly its first piece");
    t.equal(
      deltas
        .slice(retry)
        .map((d) => d.content)
        .join(''),
      ANSWER,
      "the retry's deltas add up to the reply",
    );
  });
});
