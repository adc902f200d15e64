// docs/reference/bounds.md at the gateway's invoke: `?timeout` is bounded and checked before
// anything is written; an empty or too-deep body is bad JSON for every agent; nothing stored makes
// a read answer 500; a 5xx from invoke leaves nothing behind; the `recent` set and an orphaned
// invocation expire.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyLayout, newRootId } from '@agentmesh/shared';
import { meshScripts } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import t from 'tap';
import { InvocationService } from '../src/invocations/invocation-service.js';
import { Waiters } from '../src/invocations/waiters.js';
import { startGateway } from './support/gateway.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gateway-bounds-'));
const codeAgent = path.join(dir, 'any-input.mjs');
fs.writeFileSync(codeAgent, "export default { run: async (input) => 'got ' + typeof input };\n");

// No runner: an accepted invocation stays queued (test/gateway-edge.test.ts runs what needs one).
const mesh = await startGateway(t, {
  agentsYaml: `
  chat: {description: Chats., instructions: "@agent chat"}
  coder: {module: '${codeAgent}'}
`,
});
const keys = keyLayout(mesh.prefix);
/** Every key of the test's Redis that belongs to an invocation tree. */
const treeKeys = async () => (await mesh.client.keys(`${mesh.prefix}:{inv_*`)).sort();

t.test(
  'a timeout past the maximum, zero, negative, fractional or not a number is refused before anything is written',
  async (t) => {
    const before = await treeKeys();
    for (const timeout of ['86401', '9000000000000', '0', '-5', '1.5', '10.0', 'soon', '1e3', '', ' 60']) {
      const res = await mesh.invoke(
        'chat',
        { prompt: 'hi' },
        `wait=0&timeout=${encodeURIComponent(timeout)}`,
      );
      t.equal(res.status, 400, `timeout=${timeout}`);
      t.equal(res.json.error.code, 'invalid_input');
      t.same(
        res.json.error.details.map((d: { path: string }) => d.path),
        ['/timeout'],
      );
    }
    t.strictSame(await treeKeys(), before, 'no invocation was created');
    t.equal(await mesh.client.zcard(keys.recent()), 0, 'nothing was listed');
    t.equal(await mesh.queued('chat'), 0, 'no job was queued');
    const max = await mesh.invoke('chat', { prompt: 'hi' }, 'wait=0&timeout=86400');
    t.equal(max.status, 202, 'the maximum itself is accepted');
    t.equal(Date.parse(max.json.deadline) - Date.parse(max.json.createdAt), 86_400_000);
  },
);

t.test('an empty body is invalid_json for every agent, a code agent without input schema too', async (t) => {
  for (const agent of ['chat', 'coder']) {
    for (const headers of [{}, { 'content-type': 'application/json' }]) {
      const res = await mesh.app.inject({ method: 'POST', url: `/agents/${agent}/invoke`, headers });
      t.equal(res.statusCode, 400, `${agent} ${JSON.stringify(headers)}`);
      t.equal(res.json().error.code, 'invalid_json');
    }
  }
  const ok = await mesh.app.inject({
    method: 'POST',
    url: '/agents/coder/invoke?wait=0',
    headers: { 'content-type': 'application/json' },
    payload: '"text"',
  });
  t.equal(ok.statusCode, 202, 'a JSON body is accepted for the code agent');
  t.strictSame(ok.json().input, 'text');
});

t.test('JSON nested deeper than the stack allows is invalid_json, never a 500', async (t) => {
  for (const depth of [300, 5000, 100_000]) {
    const payload = `{"prompt":"x","deep":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const res = await mesh.app.inject({
      method: 'POST',
      url: '/agents/coder/invoke?wait=0',
      headers: { 'content-type': 'application/json' },
      payload,
    });
    t.equal(res.statusCode, 400, `depth ${depth}`);
    t.equal(res.json().error.code, 'invalid_json');
    t.match(res.json().error.message, /deeper than 256 levels/);
  }
  const strings = `{"prompt":"${'['.repeat(5000)}"}`;
  const res = await mesh.invoke('chat', JSON.parse(strings), 'wait=0');
  t.equal(res.status, 202, 'brackets inside strings are no nesting');
});

t.test(
  'an invocation stored with a date past what Date holds, or unreadable JSON, still reads',
  async (t) => {
    const id = newRootId();
    await mesh.client.hset(keys.invocation(id, id), {
      v: '1',
      id,
      agent: 'coder',
      status: 'running',
      input: '',
      output: '{not json',
      rootId: id,
      depth: '0',
      createdAt: String(Date.now()),
      deadline: '9000000000000000000',
      epoch: '1',
      defHash: 'x',
    });
    await mesh.client.hset(keys.calls(id, id), 'c1', '{broken');
    await mesh.client.zadd(keys.recent(), String(Date.now()), id);
    const one = await mesh.get(`/invocations/${id}`);
    t.equal(one.status, 200);
    t.equal(one.json.deadline, '+275760-09-13T00:00:00.000Z', 'the deadline is clamped to the last date');
    t.equal(one.json.input, null, 'unreadable JSON reads as null');
    t.strictSame(one.json.calls, [], 'an unreadable call record is left out');
    const list = await mesh.get('/invocations?limit=100');
    t.equal(list.status, 200);
    t.ok(
      list.json.items.some((i: { id: string }) => i.id === id),
      'the list holds it',
    );
    const cancelled = await mesh.request('DELETE', `/invocations/${id}`);
    t.equal(cancelled.status, 202, 'it can be cancelled');
  },
);

t.test('a failed enqueue answers 503 and leaves no invocation behind', async (t) => {
  const redis = mesh.client.duplicate();
  const subscriber = mesh.client.duplicate();
  t.teardown(() => {
    redis.disconnect();
    subscriber.disconnect();
  });
  const failing = {
    add: async () => {
      throw new Error('Connection is closed.');
    },
    remove: async () => 0,
  } as unknown as Queue;
  const waiters = new Waiters(subscriber, keys.doneChannel());
  await waiters.start();
  const service = new InvocationService(
    redis,
    meshScripts(redis),
    keys,
    new Map([['chat', failing]]),
    waiters,
    3600,
  );
  const agent = mesh.gateway.mesh.plan!.agents.chat!;
  const before = await treeKeys();
  const recentBefore = await mesh.client.zrange(keys.recent(), '0', '-1');
  const queuedBefore = await mesh.queued('chat');
  for (const idempotencyKey of [undefined, 'retry-me']) {
    const failed = await service
      .start(agent, { prompt: 'hi' }, { timeoutMs: 60_000, waitMs: 0, idempotencyKey })
      .then(
        () => undefined,
        (e: { code?: string; status?: number }) => e,
      );
    t.equal(failed?.code, 'unavailable', 'the caller is told to retry');
    t.equal(failed?.status, 503);
  }
  t.strictSame(await treeKeys(), before, 'no invocation keys remain');
  t.strictSame(await mesh.client.zrange(keys.recent(), '0', '-1'), recentBefore, 'nothing is listed');
  t.equal(await mesh.queued('chat'), queuedBefore, 'no job was added');
});

t.test('a new invocation expires unless it ends, and the recent set is trimmed and expires', async (t) => {
  const retention = 3600;
  const stale = newRootId();
  await mesh.client.zadd(keys.recent(), String(Date.now() - retention * 1000 - 60_000), stale);
  const res = await mesh.invoke('chat', { prompt: 'queued' }, 'wait=0&timeout=120');
  const id = res.json.id as string;
  t.equal(res.status, 202);
  const ttl = await mesh.client.ttl(keys.invocation(id, id));
  t.ok(ttl > 0 && ttl <= 120 + retention, `a queued invocation has a TTL (${ttl})`);
  t.ok((await mesh.client.ttl(keys.events(id))) > 0, 'so has its event log');
  t.equal(await mesh.client.zscore(keys.recent(), stale), null, 'an entry older than the retention is gone');
  t.ok(await mesh.client.zscore(keys.recent(), id), 'the new one is listed');
  const recentTtl = await mesh.client.ttl(keys.recent());
  t.ok(recentTtl > 0 && recentTtl <= retention, `the recent set expires (${recentTtl})`);
});
