// Only the invocation's cancellation aborts a running tool (docs/architecture/durability-and-fencing.md, docs/reference/bounds.md): the flag in Redis,
// looked up when a broadcast on the cancel channel names any invocation of the same tree.
import { keyLayout } from '@agentmesh/shared';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { argsHash } from '../src/idempotency/args-hash.js';
import { buildToolHost, loadToolDefinitions, OutcomeStore } from '../src/index.js';

const keys = keyLayout('mesh');
const root = `inv_${'a'.repeat(32)}`;
const childA = `${root}-${'1'.repeat(16)}`;
const childB = `${root}-${'2'.repeat(16)}`;

async function host(t: Test) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => client.disconnect());
  const started: string[] = [];
  const ended: { key: string; aborted: boolean }[] = [];
  const gates = new Map<string, () => void>();
  const tools = loadToolDefinitions([
    {
      name: 'transfer',
      description: 'Moves money (not safe to repeat); waits until the test lets it finish.',
      input: { type: 'object' },
      run: async (_args, ctx) => {
        started.push(ctx.idempotencyKey);
        await new Promise<void>((resolve) => {
          gates.set(ctx.idempotencyKey, resolve);
          ctx.signal.addEventListener('abort', () => resolve());
        });
        ended.push({ key: ctx.idempotencyKey, aborted: ctx.signal.aborted });
        return `transferred for ${ctx.invocationId}`;
      },
    },
  ]);
  const outcomes = new OutcomeStore(client, keys, 3600, 1000);
  const app = buildToolHost({ tools, outcomes });
  t.teardown(() => app.close());
  await app.ready();
  for (const id of [root, childA, childB]) {
    await client.hset(keys.invocation(root, id), 'status', id === root ? 'waiting' : 'running');
  }
  const call = (invocationId: string) =>
    app.inject({
      method: 'POST',
      url: '/tools/transfer/invoke',
      payload: {
        args: {},
        context: {
          invocationId,
          callId: 't0-call0',
          agent: 'a',
          deadline: new Date(Date.now() + 60_000).toISOString(),
          idempotencyKey: `${invocationId}/t0-call0`,
        },
      },
    });
  /** What the gateway's cancel does: flag the invocation (CANCEL_TREE), then broadcast an id. */
  const cancel = async (flag: string | undefined, broadcast: string) => {
    if (flag) await client.hset(keys.invocation(root, flag), 'cancelRequested', '1');
    await client.publish(keys.cancelChannel(), broadcast);
  };
  const running = (n: number) =>
    waitUntil(
      async () => started.length === n,
      10_000,
      () => `${n} runs`,
    );
  return { call, cancel, running, started, ended, gates, client, outcomes };
}

t.test(
  "a cancelled invocation's running tool is aborted, even by its ancestor's broadcast, and its key is left in doubt",
  async (t) => {
    const h = await host(t);
    const first = h.call(childA);
    await h.running(1);
    await h.cancel(childA, root);
    const res = await first;
    t.equal(res.statusCode, 409);
    t.strictSame(res.json(), { error: { code: 'cancelled', message: 'The invocation was cancelled.' } });
    t.strictSame(h.ended, [{ key: `${childA}/t0-call0`, aborted: true }], 'the tool saw its signal aborted');
    const key = `${childA}/t0-call0`;
    t.equal(await h.client.exists(keys.toolLease(key)), 0, 'the lease was abandoned');
    const admission = await h.outcomes.admit(key, { tool: 'transfer', argsHash: argsHash({}) }, false);
    t.equal(admission.kind, 'in_doubt', 'the key is in doubt: a repeat would not run the tool');
    t.equal(h.started.length, 1, 'the tool ran once');
  },
);

t.test('a broadcast aborts only the calls whose own invocation is flagged', async (t) => {
  const h = await host(t);
  const a = h.call(childA);
  const b = h.call(childB);
  await h.running(2);
  await h.cancel(undefined, root); // nothing flagged: a sibling's or a finished invocation's broadcast
  await h.cancel(childB, childB);
  t.equal((await b).json().error.code, 'cancelled', 'the flagged call is aborted');
  t.strictSame(h.ended, [{ key: `${childB}/t0-call0`, aborted: true }], 'the other call still runs');
  h.gates.get(`${childA}/t0-call0`)!();
  const done = await a;
  t.equal(done.statusCode, 200);
  t.strictSame(done.json(), { result: `transferred for ${childA}` });
});

t.test(
  'a call of an invocation cancelled before it arrives never runs and leaves its key free',
  async (t) => {
    const h = await host(t);
    await h.client.hset(keys.invocation(root, childA), 'cancelRequested', '1');
    const res = await h.call(childA);
    t.equal(res.statusCode, 409);
    t.equal(res.json().error.code, 'cancelled');
    t.equal(h.started.length, 0, 'the tool did not run');
    t.equal(await h.client.exists(keys.toolOutcome(`${childA}/t0-call0`)), 0, 'nothing recorded');
  },
);
