// The tool-host keeps each Idempotency-Key's outcome and a lease while the call runs (DESIGN 7):
// a tool's side effect happens at most once unless the tool says repeating it is safe.
import { keyLayout } from '@agentmesh/shared';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { startRedis } from '../../../test/support/redis-server.js';
import { buildToolHost, loadToolDefinitions, OutcomeStore } from '../src/index.js';

async function host(t: Test, opts: { idempotent: boolean; delayMs?: number; fail?: boolean }) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => client.disconnect());
  const runs: unknown[] = [];
  const tools = loadToolDefinitions([
    {
      name: 'pay',
      description: 'Pays.',
      input: { type: 'object', properties: { amount: { type: 'number' } } },
      idempotent: opts.idempotent,
      run: async (args) => {
        runs.push(args);
        if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
        if (opts.fail) throw new Error('card declined');
        return { paid: (args as { amount: number }).amount, n: runs.length };
      },
    },
  ]);
  const app = buildToolHost({ tools, outcomes: new OutcomeStore(client, keyLayout('mesh'), 3600, 1000) });
  t.teardown(() => app.close());
  const call = (key: string) =>
    app.inject({
      method: 'POST',
      url: '/tools/pay/invoke',
      payload: {
        args: { amount: 5 },
        context: {
          invocationId: 'inv_x',
          callId: 't0-call0',
          agent: 'a',
          deadline: new Date(Date.now() + 60_000).toISOString(),
          idempotencyKey: key,
        },
      },
    });
  return { call, runs, client };
}

t.test(
  'a repeated Idempotency-Key answers from the recorded outcome without running the tool again',
  async (t) => {
    const h = await host(t, { idempotent: false });
    const first = await h.call('k1');
    const second = await h.call('k1');
    t.equal(first.statusCode, 200);
    t.same(second.json(), first.json(), 'the same answer');
    t.equal(h.runs.length, 1, 'the tool ran once');
    await h.call('k2');
    t.equal(h.runs.length, 2, 'another key is another call');
  },
);

t.test('a recorded failure is answered again, not retried', async (t) => {
  const h = await host(t, { idempotent: false, fail: true });
  const first = await h.call('k1');
  const second = await h.call('k1');
  t.equal(first.statusCode, 502);
  t.same(second.json(), { error: { code: 'tool_failed', message: 'card declined' } });
  t.equal(h.runs.length, 1);
});

t.test('a duplicate arriving while the call runs waits for its outcome', async (t) => {
  const h = await host(t, { idempotent: false, delayMs: 300 });
  const [a, b] = await Promise.all([h.call('k1'), h.call('k1')]);
  t.equal(a.statusCode, 200);
  t.same(b.json(), a.json());
  t.equal(h.runs.length, 1, 'concurrent duplicates run the tool once');
});

t.test(
  'a call whose run was lost (started, lease expired) is in doubt for a tool that is not idempotent',
  async (t) => {
    const h = await host(t, { idempotent: false });
    // The state a tool-host killed mid-call leaves: the key started, its lease gone.
    await h.client.set(keyLayout('mesh').toolOutcome('k1'), 'started');
    const res = await h.call('k1');
    t.equal(res.statusCode, 409);
    t.equal(res.json().error.code, 'tool_in_doubt');
    t.match(res.json().error.message, /may or may not have taken effect.*not idempotent/);
    t.equal(h.runs.length, 0, 'the tool did not run again');
  },
);

t.test('a call whose run was lost runs again when the tool is idempotent', async (t) => {
  const h = await host(t, { idempotent: true });
  await h.client.set(keyLayout('mesh').toolOutcome('k1'), 'started');
  const res = await h.call('k1');
  t.equal(res.statusCode, 200);
  t.equal(h.runs.length, 1);
  t.equal((await h.call('k1')).json().result.n, 1, 'and its outcome is then kept');
});
