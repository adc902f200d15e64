// cancelTree against a real Redis: the level-by-level walk, CANCEL_TREE's batches (every key in KEYS), a
// child created just before its parent is flagged, and a tree that fails with an error.
import { childId, keyLayout, newRootId, rootOf } from '@agentmesh/shared';
import { type MeshScripts, meshScripts } from '@agentmesh/shared/redis';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { Redis } from 'ioredis';
import t from 'tap';
import { cancelTree } from '../src/store/cancel-tree.js';

const redisServer = await startRedis();
const redis = new Redis(redisServer.url);
t.teardown(async () => {
  redis.disconnect();
  await redisServer.stop();
});
const keys = keyLayout('ct');
const scripts = meshScripts(redis);

/** Writes a node in `status` and, when it has a parent, the parent's delegation record naming it. */
async function node(id: string, status: string, parent?: string) {
  await redis.hset(keys.invocation(rootOf(id), id), { v: '1', id, status });
  if (parent) {
    const callId = id.slice(-8);
    await redis.hset(keys.calls(rootOf(parent), parent), callId, JSON.stringify({ callId, childId: id }));
  }
}

const flagOf = async (id: string) => redis.hget(keys.invocation(rootOf(id), id), 'cancelRequested');

t.test(
  'every node of the subtree not terminal is flagged, each once; ancestors and ended ones not',
  async (t) => {
    const root = newRootId();
    const a = childId(root, 't0-call0');
    const b = childId(root, 't0-call1');
    const g = childId(a, 't0-call0');
    await node(root, 'running');
    await node(a, 'waiting', root);
    await node(b, 'succeeded', root);
    await node(g, 'queued', a);
    const flagged = await cancelTree(scripts, keys, a);
    t.same(flagged, [
      { id: a, status: 'waiting' },
      { id: g, status: 'queued' },
    ]);
    t.equal(await flagOf(a), '1');
    t.equal(await flagOf(g), '1');
    t.equal(await flagOf(root), null, 'never an ancestor');
    t.equal(await flagOf(b), null);
    t.same(await cancelTree(scripts, keys, b), [], 'a terminal node flags nothing');
  },
);

t.test('a child created just before its parent is flagged is flagged too', async (t) => {
  const root = newRootId();
  const late = childId(root, 't1-call0');
  await node(root, 'running');
  let first = true;
  const racing: MeshScripts = {
    ...scripts,
    cancelTree: async (...args) => {
      if (first) await node(late, 'queued', root); // SUBMIT_CHILD just before the parent's flag
      first = false;
      return scripts.cancelTree(...args);
    },
  };
  const flagged = await cancelTree(racing, keys, root);
  t.same(
    flagged.map((n) => n.id),
    [root, late],
  );
  t.equal(await flagOf(late), '1');
});

t.test('a wide tree is flagged in several steps, every node once', async (t) => {
  const root = newRootId();
  await node(root, 'waiting');
  const children = Array.from({ length: 600 }, (_, i) => childId(root, `t0-call${i}`));
  for (const c of children) await node(c, 'running', root);
  const flagged = await cancelTree(scripts, keys, root);
  t.equal(flagged.length, 601);
  t.equal(new Set(flagged.map((n) => n.id)).size, 601);
  t.same(
    (await Promise.all(children.map(flagOf))).filter((f) => f !== '1'),
    [],
  );
});

t.test('an error fails the target (treeError) only while it runs; the first error stays', async (t) => {
  const root = newRootId();
  const child = childId(root, 't0-call0');
  await node(root, 'running');
  await node(child, 'running', root);
  await cancelTree(scripts, keys, root, '{"code":"budget_exceeded"}');
  await cancelTree(scripts, keys, root, '{"code":"other"}');
  t.equal(await redis.hget(keys.invocation(root, root), 'treeError'), '{"code":"budget_exceeded"}');
  t.equal(await redis.hget(keys.invocation(root, child), 'treeError'), null, 'only the target');
  const ended = newRootId();
  await node(ended, 'succeeded');
  await cancelTree(scripts, keys, ended, '{"code":"budget_exceeded"}');
  t.equal(await redis.hget(keys.invocation(ended, ended), 'treeError'), null);
});

t.test("a fork's reused delegation names another tree's child: that child is never flagged", async (t) => {
  const original = newRootId();
  const child = childId(original, 't0-call0');
  await node(original, 'running');
  await node(child, 'running', original);
  const fork = newRootId();
  await node(fork, 'running');
  // The fork's copy of the original's delegation record (docs/guides/durability.md).
  await redis.hset(
    keys.calls(fork, fork),
    't0-call0',
    JSON.stringify({ callId: 't0-call0', childId: child, reused: true }),
  );
  t.same(await cancelTree(scripts, keys, fork), [{ id: fork, status: 'running' }]);
  t.equal(await flagOf(child), null, "the original's child runs on");
});
