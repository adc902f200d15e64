import { keyLayout } from '@agentmesh/shared';
import { keySlot } from '@agentmesh/shared/redis';
import type { Cluster } from 'ioredis';
import t from 'tap';
import { turnOf } from '../support/fake-model.js';
import { listen, startMesh } from '../support/mesh.js';

const mesh = await startMesh(t, {
  cluster: true,
  tools: [
    {
      name: 'add',
      description: 'Adds two numbers.',
      input: {
        type: 'object',
        properties: { a: { type: 'number' }, b: { type: 'number' } },
        required: ['a', 'b'],
      },
      run: async (args: unknown) => String((args as { a: number; b: number }).a + (args as { b: number }).b),
    },
  ],
  agentsYaml: `
  parent: {instructions: "@agent parent", tools: [add], subagents: [child]}
  child: {instructions: "@agent child"}
`,
  script: (r) => {
    if (r.agent === 'child') return { final: 'child answer' };
    if (turnOf(r) === 0)
      return {
        calls: [
          { name: 'add', args: { a: 2, b: 3 } },
          { name: '_subagent_child', args: { prompt: 'x' } },
        ],
      };
    // The parent's last turn is slow, so a stream sees the delegation end while the root still runs.
    const contents = r.messages.filter((m) => m.role === 'tool').map((m) => m.content);
    return { final: `parent got ${contents.join(' and ')}`, latencyMs: 700 };
  },
});
const base = await listen(mesh);
const keys = keyLayout(mesh.prefix);

/** The master node serving an invocation tree's keys. */
const nodeOf = (rootId: string) =>
  (mesh.client as unknown as Cluster).slots[keySlot(keys.events(rootId))]?.[0];

/** Reads a tree's SSE stream to its end; on `delegation_finished`, notes the root's status then. */
async function readStream(id: string): Promise<{ types: string[]; statusAtDelegationEnd?: string }> {
  const res = await fetch(`${base}/invocations/${id}/events`);
  const types: string[] = [];
  let statusAtDelegationEnd: string | undefined;
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body!) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    for (let i = buffer.indexOf('\n\n'); i !== -1; i = buffer.indexOf('\n\n')) {
      const type = /^event: (.+)$/m.exec(buffer.slice(0, i))?.[1];
      buffer = buffer.slice(i + 2);
      if (!type) continue;
      types.push(type);
      if (type === 'delegation_finished')
        statusAtDelegationEnd ??= (await mesh.get(`/invocations/${id}`)).json.status;
    }
  }
  return { types, ...(statusAtDelegationEnd ? { statusAtDelegationEnd } : {}) };
}

t.test('invocations with a delegation and a tool call run, stream and list on a cluster', async (t) => {
  t.equal((await mesh.get('/readyz')).status, 200, 'ready: runner heartbeats are read across slots');
  // Enough roots that at least two masters hold trees, and (four roots, three masters) one master
  // holds two: trees of two slots on one node, which no single XREAD may read together.
  const ids: string[] = [];
  while (ids.length < 4 || new Set(ids.map(nodeOf)).size < 2) {
    const res = await mesh.invoke('parent', { prompt: 'go' }, 'wait=0');
    t.equal(res.status, 202);
    ids.push(res.json.id);
    if (ids.length > 20) break;
  }
  t.ok(new Set(ids.map(nodeOf)).size >= 2, 'the trees live on more than one master');
  const streams = await Promise.all(ids.map(readStream));
  for (const [i, s] of streams.entries()) {
    t.ok(s.types.includes('delegation_started'), `stream ${i}: delegation started`);
    t.ok(s.types.includes('tool_call'), `stream ${i}: the tool call`);
    t.equal(s.types.at(-1), 'status', `stream ${i}: ends on the terminal status`);
    t.not(
      ['succeeded', 'failed', 'cancelled'].includes(s.statusAtDelegationEnd ?? 'succeeded'),
      true,
      `stream ${i}: the delegation's end arrived while the root still ran (read live, not at the end)`,
    );
  }
  for (const id of ids) {
    const view = (await mesh.get(`/invocations/${id}`)).json;
    t.equal(view.status, 'succeeded');
    t.equal(view.output, 'parent got 5 and child answer');
    const child = view.calls.find((c: { kind: string }) => c.kind === 'subagent');
    t.match(child, { name: 'child', status: 'succeeded', childId: /^inv_/ });
    t.equal((await mesh.get(`/invocations/${child.childId}`)).json.output, 'child answer');
  }
  const listed = (await mesh.get('/invocations?agent=parent&limit=50')).json;
  t.strictSame(
    listed.items.map((i: { id: string }) => i.id).sort(),
    [...ids].sort(),
    'the recent list holds every root, read across slots',
  );
});

t.test(
  "invoke?stream=true and a tree's deltas on a cluster: both keys of a tree read together",
  async (t) => {
    const res = await fetch(`${base}/agents/child/invoke?stream=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'go' }),
    });
    t.equal(res.status, 200);
    const text = await res.text();
    const events = text
      .split('\n\n')
      .filter((b) => b.includes('data: '))
      .map((b) => ({ id: /^id: (.+)$/m.exec(b)![1]!, data: JSON.parse(/^data: (.+)$/m.exec(b)![1]!) }));
    const id = events[0]!.data.data.id as string;
    t.equal(events.at(-1)!.data.data.status, 'succeeded', 'it ended after the terminal status');
    t.equal(await mesh.client.exists(keys.watch(id)), 1, 'the tree is watched (on its own slot)');
    // The runner streamed the child's reply as deltas (the fake model streams), read on its slot.
    t.ok(
      events.some((e) => e.data.type === 'delta'),
      "the invoke stream carried the runner's deltas",
    );
    const resumed = await (
      await fetch(`${base}/invocations/${id}/events?deltas=true`, {
        headers: { 'last-event-id': events[0]!.id },
      })
    ).text();
    const types = resumed
      .split('\n\n')
      .map((b) => /^event: (.+)$/m.exec(b)?.[1])
      .filter(Boolean);
    t.ok(types.includes('delta'), 'resumed: the deltas came with the structural events');
    t.equal(
      types.filter((x) => x !== 'delta').length,
      events.filter((e) => e.data.type !== 'delta').length - 1,
      'and every structural event after the view',
    );
  },
);
