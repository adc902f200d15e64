// The tool-host keeps each Idempotency-Key's outcome and a lease while the call runs (docs/architecture/durability-and-fencing.md):
// a tool's side effect happens at most once unless the tool says repeating it is safe. A key is
// bound to the tool and arguments it was first used with, and is at most 512 bytes (docs/reference/bounds.md).
import type { AddressInfo } from 'node:net';
import { keyLayout } from '@agentmesh/shared';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { Redis } from 'ioredis';
import t, { type Test } from 'tap';
import { Agent, fetch } from 'undici';
import { argsHash } from '../src/idempotency/args-hash.js';
import { buildToolHost, loadToolDefinitions, OutcomeStore } from '../src/index.js';

const keys = keyLayout('mesh');

async function host(t: Test, opts: { idempotent: boolean; delayMs?: number; fail?: boolean }) {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const client = new Redis(redis.url, { maxRetriesPerRequest: null });
  t.teardown(() => client.disconnect());
  const runs: unknown[] = [];
  const ended: { aborted: boolean }[] = [];
  const pay = {
    description: 'Pays.',
    input: { type: 'object', properties: { amount: { type: 'number' } } },
    idempotent: opts.idempotent,
    run: async (args: unknown, ctx: { signal: AbortSignal }) => {
      runs.push(args);
      if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
      ended.push({ aborted: ctx.signal.aborted });
      if (opts.fail) throw new Error('card declined');
      return { paid: (args as { amount: number }).amount, n: runs.length };
    },
  };
  const tools = loadToolDefinitions([
    { name: 'pay', ...pay },
    { name: 'refund', ...pay },
  ]);
  const app = buildToolHost({ tools, outcomes: new OutcomeStore(client, keys, 3600, 1000) });
  t.teardown(() => app.close());
  const body = (key: string, amount: number) => ({
    args: { amount },
    context: {
      invocationId: 'inv_x',
      callId: 't0-call0',
      agent: 'a',
      deadline: new Date(Date.now() + 60_000).toISOString(),
      idempotencyKey: key,
    },
  });
  const call = (key: string, o: { tool?: string; amount?: number } = {}) =>
    app.inject({
      method: 'POST',
      url: `/tools/${o.tool ?? 'pay'}/invoke`,
      payload: body(key, o.amount ?? 5),
    });
  /** The state a tool-host killed mid-call leaves: the key started for `pay {amount: 5}`, no lease. */
  const plantStarted = (key: string) =>
    client.hset(keys.toolOutcome(key), 'tool', 'pay', 'args', argsHash({ amount: 5 }));
  return { app, call, body, runs, ended, client, plantStarted };
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
    await h.plantStarted('k1');
    const res = await h.call('k1');
    t.equal(res.statusCode, 409);
    t.equal(res.json().error.code, 'tool_in_doubt');
    t.match(res.json().error.message, /may or may not have taken effect.*not idempotent/);
    t.equal(h.runs.length, 0, 'the tool did not run again');
  },
);

t.test('a call whose run was lost runs again when the tool is idempotent', async (t) => {
  const h = await host(t, { idempotent: true });
  await h.plantStarted('k1');
  const res = await h.call('k1');
  t.equal(res.statusCode, 200);
  t.equal(h.runs.length, 1);
  t.equal((await h.call('k1')).json().result.n, 1, 'and its outcome is then kept');
});

t.test(
  'a key reused with other arguments or another tool is refused with 422 and never shows the result',
  async (t) => {
    const h = await host(t, { idempotent: true });
    t.equal((await h.call('k1')).statusCode, 200);
    const expected = {
      error: {
        code: 'idempotency_key_reused',
        message: 'This Idempotency-Key was used with another tool or other arguments; tool pay was not run.',
      },
    };
    const otherArgs = await h.call('k1', { amount: 6 });
    t.equal(otherArgs.statusCode, 422);
    t.strictSame(otherArgs.json(), expected);
    const otherTool = await h.call('k1', { tool: 'refund' });
    t.equal(otherTool.statusCode, 422);
    t.equal(otherTool.json().error.code, 'idempotency_key_reused');
    t.equal(h.runs.length, 1, 'neither ran');
    t.equal((await h.call('k1')).json().result.n, 1, 'the original call still answers from its outcome');
  },
);

t.test(
  'a planted started marker of another tool does not let a call read or run under its key',
  async (t) => {
    const h = await host(t, { idempotent: true });
    await h.plantStarted('k1');
    const res = await h.call('k1', { tool: 'refund' });
    t.equal(res.statusCode, 422);
    t.equal(h.runs.length, 0);
  },
);

t.test('the same arguments in another key order are the same call', async (t) => {
  const h = await host(t, { idempotent: false });
  const payload = (args: string) => `{"args":${args},"context":${JSON.stringify(h.body('k1', 5).context)}}`;
  const send = (args: string) =>
    h.app.inject({
      method: 'POST',
      url: '/tools/pay/invoke',
      headers: { 'content-type': 'application/json' },
      payload: payload(args),
    });
  t.equal((await send('{"amount":5,"note":"x"}')).statusCode, 200);
  t.equal((await send('{"note":"x","amount":5}')).statusCode, 200);
  t.equal(h.runs.length, 1);
});

t.test(
  'an Idempotency-Key longer than 512 bytes is refused with 400 invalid_input and its path',
  async (t) => {
    const h = await host(t, { idempotent: false });
    const res = await h.call('€'.repeat(171)); // 513 bytes
    t.equal(res.statusCode, 400);
    t.strictSame(res.json(), {
      error: {
        code: 'invalid_input',
        message: 'The Idempotency-Key is longer than 512 bytes.',
        details: [{ path: '/context/idempotencyKey', message: 'must be at most 512 bytes' }],
      },
    });
    t.equal(h.runs.length, 0);
    t.equal((await h.call('€'.repeat(170) + 'xx')).statusCode, 200, '512 bytes are accepted');
  },
);

t.test('the record and the lease share one hash tag per key and both expire', async (t) => {
  const h = await host(t, { idempotent: false, delayMs: 300 });
  const running = h.call('inv_a/t0-call0');
  const lease = keys.toolLease('inv_a/t0-call0');
  await waitUntil(
    async () => (await h.client.exists(lease)) === 1,
    10_000,
    () => 'the lease',
  );
  t.ok((await h.client.pttl(lease)) > 0, 'the lease expires');
  await running;
  const found = (await h.client.keys('mesh:*')).sort();
  t.equal(found.length, 1, 'the lease is gone once the outcome is kept');
  t.match(found[0], /^mesh:\{tool:[0-9a-f]{64}\}:outcome$/);
  t.equal(found[0]!.replace(':outcome', ':lease'), lease, 'the same hash tag');
  t.ok((await h.client.ttl(found[0]!)) > 0, 'the record expires');
});

t.test(
  'a caller that disconnects mid-call: the tool runs to its end, its outcome is kept and answers the retry',
  async (t) => {
    const h = await host(t, { idempotent: false, delayMs: 400 });
    await h.app.listen({ port: 0, host: '127.0.0.1' });
    const dispatcher = new Agent();
    t.teardown(() => dispatcher.close());
    const url = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}/tools/pay/invoke`;
    const post = (signal?: AbortSignal) =>
      fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        dispatcher,
        body: JSON.stringify(h.body('k1', 5)),
        ...(signal ? { signal } : {}),
      });
    const abort = new AbortController();
    const gone = post(abort.signal).catch(() => 'gone');
    await waitUntil(
      async () => h.runs.length === 1,
      10_000,
      () => 'the tool to start',
    );
    abort.abort();
    t.equal(await gone, 'gone', 'the caller went away');
    const retry = await post();
    t.equal(retry.status, 200, 'the retry waited for the running call');
    t.strictSame(await retry.json(), { result: { paid: 5, n: 1 } }, 'and got its real result');
    t.strictSame(h.ended, [{ aborted: false }], 'the tool ran once, to its end, never aborted');
    const later = await h.call('k1');
    t.strictSame(later.json(), { result: { paid: 5, n: 1 } }, 'the outcome stays recorded');
    t.equal(h.runs.length, 1);
  },
);
