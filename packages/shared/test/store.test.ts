// The invocation store (src/store/): the state encoding, a tree's large texts, and, against a real Redis
// (one per part, stopped when its part ends), cancelTree, the shared Lua fragments and the wait for
// the tool catalogue.

import { childId, keyLayout, newRootId, rootOf } from '@agentmesh/shared';
import { type MeshScripts, meshScripts } from '@agentmesh/shared/redis';
import { freePort, startRedisClient } from '@agentmesh/test-support/redis-server';
import { Redis } from 'ioredis';
import t from 'tap';
import { modelCallId, toolCallId } from '../src/ids.js';
import { truncateResult } from '../src/json/truncate-result.js';
import { cancelTree } from '../src/store/cancel-tree.js';
import { waitForCatalogue } from '../src/store/catalogue.js';
import { decodeCalls, decodeInvocation, encodeNewInvocation } from '../src/store/invocation-state.js';
import { meshLua } from '../src/store/lua-steps.js';
import {
  contentFieldsOf,
  outputFieldOf,
  recordTextRefs,
  recordWithTexts,
  storedRecord,
  type TreeTexts,
  textRefsIn,
} from '../src/store/tree-texts.js';
import type { CallRecord } from '../src/wire/call-record.js';
import { InvocationStatus, isTerminal, TERMINAL_STATUSES } from '../src/wire/invocation-view.js';
import { callRecord, modelReply } from './fixtures/react/recorded-calls.js';

t.test('invocation state: encodeNewInvocation, decodeInvocation, decodeCalls', async (t) => {
  // The state encoding: what a new invocation writes to its hash, and how a hash the Lua steps
  // changed afterwards (claimed, finished) reads back.

  const created = {
    id: 'inv1',
    agent: 'boss',
    input: { prompt: 'hi' },
    rootId: 'inv1',
    depth: 0,
    createdAt: 1000,
    deadline: 61_000,
    defHash: 'h',
  };
  const hashOf = (fields: string[]) =>
    Object.fromEntries(fields.flatMap((_, i) => (i % 2 === 0 ? [[fields[i]!, fields[i + 1]!]] : [])));

  t.test('a new invocation is written queued, at epoch 0, with only the fields it has', async (t) => {
    const rows: [name: string, extra: Record<string, unknown>, fields: Record<string, string>][] = [
      ['a root', {}, {}],
      [
        'a child of a cancelled parent',
        { parentId: 'p', parentCallId: toolCallId(0, 0), parentAgent: 'boss', cancelRequested: true },
        { parentId: 'p', parentCallId: toolCallId(0, 0), parentAgent: 'boss', cancelRequested: '1' },
      ],
      ['an owned, traced one', { owner: 'k', traceparent: 'tp' }, { owner: 'k', traceparent: 'tp' }],
    ];
    for (const [name, extra, fields] of rows) {
      t.strictSame(
        hashOf(encodeNewInvocation({ ...created, ...extra })),
        {
          v: '1',
          id: 'inv1',
          agent: 'boss',
          status: 'queued',
          input: '{"prompt":"hi"}',
          rootId: 'inv1',
          depth: '0',
          createdAt: '1000',
          deadline: '61000',
          epoch: '0',
          defHash: 'h',
          ...fields,
        },
        name,
      );
    }
  });

  t.test('each stored hash decodes to the state the runner and the gateway read', async (t) => {
    const base = hashOf(encodeNewInvocation(created));
    const rows: [name: string, hash: Record<string, string>, expected: Record<string, unknown>][] = [
      [
        'as created',
        base,
        {
          status: 'queued',
          epoch: 0,
          modelCalls: 0,
          recoveries: 0,
          cancelRequested: false,
          input: { prompt: 'hi' },
        },
      ],
      [
        'claimed after a crash',
        { ...base, status: 'running', epoch: '3', startedAt: '2000', recoveries: '1' },
        { status: 'running', epoch: 3, startedAt: 2000, recoveries: 1 },
      ],
      [
        'finished with an output',
        {
          ...base,
          status: 'succeeded',
          output: '{"a":1}',
          finishedAt: '3000',
          modelCalls: '2',
          promptTokens: '7',
        },
        { status: 'succeeded', output: { a: 1 }, finishedAt: 3000, modelCalls: 2, promptTokens: 7 },
      ],
      [
        'failed with a coded error',
        {
          ...base,
          status: 'failed',
          error: '{"code":"cancelled","message":"The invocation was cancelled."}',
        },
        { status: 'failed', error: { code: 'cancelled', message: 'The invocation was cancelled.' } },
      ],
    ];
    for (const [name, hash, expected] of rows) t.match(decodeInvocation(hash), expected, name);
    t.equal(decodeInvocation(base).startedAt, undefined, 'no start time before it is claimed');
  });

  t.test('an unknown version of the state or of a call record is refused unsupported_version', async (t) => {
    t.throws(() => decodeInvocation({ v: '2' }), { name: 'MeshError', code: 'unsupported_version' });
    const future = JSON.stringify({ ...callRecord(0, 0, 'clock', 'started'), v: 2 });
    t.throws(() => decodeCalls({ x: future }), { name: 'MeshError', code: 'unsupported_version' });
  });

  t.test('recorded calls decode in the order they happened, whatever the hash order', async (t) => {
    const records = [
      callRecord(1, 0, 'clock', { content: 'b' }),
      modelReply(1, [['clock', '{}']]),
      callRecord(0, 1, 'clock', { content: 'a' }),
      modelReply(0, [
        ['clock', '{}'],
        ['clock', '{}'],
      ]),
      callRecord(0, 0, 'clock', { content: 'a' }),
    ];
    const hash = Object.fromEntries(records.map((r) => [r.callId, JSON.stringify(r)]));
    const order = decodeCalls(hash).map((r) => r.callId);
    t.strictSame(order, [
      modelCallId(0),
      toolCallId(0, 0),
      toolCallId(0, 1),
      modelCallId(1),
      toolCallId(1, 0),
    ]);
  });
});

t.test('tree texts: storedRecord, outputFieldOf, contentFieldsOf, recordWithTexts', async (t) => {
  // A tree's large texts (tree-texts.ts): what a write refers to instead of storing, and how a read
  // puts it back, as the invocation's hash and its call records hold them.

  const big = `answer:${'a'.repeat(20_000)}`;
  const reply = (content: string | null): CallRecord => ({
    v: 1,
    callId: 't0-model',
    kind: 'model',
    name: 'm',
    status: 'succeeded',
    startedAt: 'x',
    reply: { content, toolCalls: [], usage: { promptTokens: 1, completionTokens: 2 } },
  });
  const delegation = (content: string): CallRecord => ({
    v: 1,
    callId: 't0-call0',
    kind: 'subagent',
    name: 'child',
    status: 'succeeded',
    startedAt: 'x',
    content,
  });

  t.test('a text of 16 KiB or less stays where it is, in the exact shape it had', async (t) => {
    const texts: TreeTexts = new Map();
    const small = 'b'.repeat(16 * 1024);
    t.strictSame(storedRecord(reply(small), texts), reply(small));
    t.strictSame(storedRecord(delegation(small), texts), delegation(small));
    t.strictSame(outputFieldOf({ answer: 'x' }, texts), ['output', '{"answer":"x"}']);
    // An output's stored value is its JSON: a string's has two quotes more.
    t.strictSame(outputFieldOf(small.slice(2), texts), ['output', JSON.stringify(small.slice(2))]);
    t.strictSame(contentFieldsOf(small, 65536, texts), { content: small });
    t.equal(texts.size, 0, 'nothing to store apart');
  });

  t.test('one answer as output, reply and tool message is one text, and reads back whole', async (t) => {
    const texts: TreeTexts = new Map();
    const [field, ref] = outputFieldOf(big, texts);
    t.equal(field, 'outputTextRef', 'a string output refers to itself as text');
    const stored = storedRecord(reply(big), texts);
    t.strictSame(stored.reply, { ...reply(big).reply, content: null, contentRef: ref });
    t.strictSame(contentFieldsOf(big, undefined, texts), { contentRef: ref });
    t.strictSame([...texts.keys()], [ref], 'stored once');
    const state = decodeInvocation({ v: '1', id: 'i', status: 'succeeded', outputTextRef: ref }, texts);
    t.equal(state.output, big);
    const calls = decodeCalls({ 't0-model': JSON.stringify(stored) }, texts);
    t.strictSame(calls, [reply(big)], 'the record as it was written');
    t.strictSame(textRefsIn({ outputTextRef: ref }, [JSON.stringify(stored)]), [ref]);
    t.strictSame(recordTextRefs([stored]), [ref]);
  });

  t.test('a structured output refers to its JSON; a cut tool message to the whole text', async (t) => {
    const texts: TreeTexts = new Map();
    const output = { answer: big };
    const [field, ref] = outputFieldOf(output, texts);
    t.equal(field, 'outputRef');
    t.same(decodeInvocation({ v: '1', id: 'i', outputRef: ref }, texts).output, output);
    const fields = contentFieldsOf(big, 18_000, new Map());
    t.match(fields, { contentCut: 18_000 });
    t.equal(fields.content, undefined, 'no copy of the cut');
    const { content: _, ...stored } = delegation('');
    const read = recordWithTexts({ ...stored, ...fields }, new Map([[fields.contentRef!, big]]));
    t.equal(read.content, truncateResult(big, 18_000), 'the cut, as truncateResult makes it');
    const small = truncateResult(big, 8000);
    t.strictSame(contentFieldsOf(big, 8000, new Map()), { content: small }, 'a cut of 16 KiB or less stays');
  });

  t.test('a text that is gone leaves its ref; a ref-like text inside a content is none', async (t) => {
    const texts: TreeTexts = new Map();
    const stored = storedRecord(delegation(big), texts);
    t.strictSame(recordWithTexts(stored, new Map()), stored);
    t.equal(decodeInvocation({ v: '1', id: 'i', outputRef: 'f'.repeat(64) }).output, undefined);
    const quoted = delegation(`"contentRef":"${'a'.repeat(64)}"`);
    t.strictSame(
      textRefsIn(undefined, [JSON.stringify(quoted)]),
      [],
      'inside a JSON string every quote is escaped',
    );
  });
});

t.test('cancelTree', async (t) => {
  // cancelTree against a real Redis: the level-by-level walk, CANCEL_TREE's batches (every key in KEYS), a
  // child created just before its parent is flagged, and a tree that fails with an error.

  const redis = await startRedisClient(t);
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
});

t.test('is-terminal.lua', async (t) => {
  // The Lua fragments the mesh's steps share, run in a real Redis: is-terminal.lua is given the
  // TypeScript side's list of terminal statuses (a loader constant) and answers as isTerminal does, for every status.

  const IS_TERMINAL = meshLua.fragment('is-terminal');
  const redis = await startRedisClient(t);

  t.test('is-terminal.lua agrees with isTerminal on every status, and on none', async (t) => {
    const statuses = InvocationStatus.anyOf.map((s) => s.const as string);
    t.same(
      statuses.filter((s) => isTerminal(s)),
      [...TERMINAL_STATUSES],
    );
    for (const status of [...statuses, 'unknown']) {
      const lua = `${IS_TERMINAL}\nreturn isTerminal(ARGV[1]) and 1 or 0`;
      t.equal(await redis.eval(lua, 0, status), isTerminal(status) ? 1 : 0, status);
    }
    const missing = await redis.eval(
      `${IS_TERMINAL}\nreturn isTerminal(redis.call('GET', 'absent')) and 1 or 0`,
      0,
    );
    t.equal(missing, 0, 'an absent status (an invocation that does not exist) is not terminal');
  });
});

t.test('waitForCatalogue', async (t) => {
  // A runner waits for the tool-host's catalogue (services start in any order). An abort (a SIGTERM
  // during its start) ends the wait at once, also while a read hangs on a Redis that does not answer.

  t.test('returns the catalogue once a tool-host publishes it, having said once that it waits', async (t) => {
    const redis = await startRedisClient(t);
    const keys = keyLayout('wc');
    let waits = 0;
    const waiting = waitForCatalogue(redis, keys, { intervalMs: 10, onWait: () => waits++ });
    await new Promise((r) => setTimeout(r, 100));
    await redis.hset(keys.catalogue(), { version: '3', tools: '[]' });
    t.strictSame(await waiting, { version: 3, tools: [] });
    t.equal(waits, 1);
  });

  t.test('an abort ends it with its reason while a read hangs on an unreachable Redis', async (t) => {
    // Nothing listens on the port: ioredis holds the read until a connection answers.
    const redis = new Redis({ host: '127.0.0.1', port: await freePort(), maxRetriesPerRequest: null });
    redis.on('error', () => undefined);
    t.teardown(() => redis.disconnect());
    const stopping = new AbortController();
    const waiting = waitForCatalogue(redis, keyLayout('wc'), { signal: stopping.signal });
    setTimeout(() => stopping.abort(new Error('SIGTERM while the runner was starting')), 100);
    await t.rejects(
      Promise.race([
        waiting,
        new Promise((_, reject) => setTimeout(() => reject(new Error('still waiting')), 5000).unref()),
      ]),
      { message: 'SIGTERM while the runner was starting' },
    );
  });
});
