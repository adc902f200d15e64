// The Redis helpers (src/redis/): REDIS_CLUSTER_NODES seeds, Redis Cluster key slots and the keys' hash
// tags, and the Lua loader. Nothing here talks to a Redis.

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { keyLayout } from '../src/keys.js';
import { MAX_CLUSTER_NODES, parseClusterNodes } from '../src/redis/cluster-nodes.js';
import { keySlot } from '../src/redis/key-slot.js';
import { LuaLoader } from '../src/redis/lua-loader.js';
import { serviceEnv } from '../src/service-env.js';

t.test('parseClusterNodes', async (t) => {
  t.test('a list of host:port seeds parses, IPv6 hosts in brackets', async (t) => {
    t.strictSame(parseClusterNodes('10.0.0.1:7000, redis-b:7001,[::1]:7002'), {
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-b', port: 7001 },
        { host: '::1', port: 7002 },
      ],
    });
  });

  t.test('a seed that is not host:port is refused with the seed named', async (t) => {
    t.match(parseClusterNodes('redis://a:7000'), { problem: /"redis:\/\/a:7000" is not host:port/ });
    t.match(parseClusterNodes('a:0'), { problem: /is not host:port/ });
    t.match(parseClusterNodes('a:70000'), { problem: /is not host:port/ });
    t.match(parseClusterNodes(' , '), { problem: /at least one/ });
    const many = Array.from({ length: MAX_CLUSTER_NODES + 1 }, (_, i) => `h:${i + 1}`).join(',');
    t.match(parseClusterNodes(many), { problem: /at most/ });
  });

  t.test('REDIS_CLUSTER_NODES is read by serviceEnv and a bad one stops the service', async (t) => {
    t.strictSame(serviceEnv({ REDIS_CLUSTER_NODES: '127.0.0.1:7000' }).redisClusterNodes, [
      { host: '127.0.0.1', port: 7000 },
    ]);
    t.equal(serviceEnv({}).redisClusterNodes, undefined);
    t.throws(() => serviceEnv({ REDIS_CLUSTER_NODES: 'nope' }), {
      code: 'invalid_config',
      message: /REDIS_CLUSTER_NODES: "nope" is not host:port/,
    });
  });
});

t.test('keySlot', async (t) => {
  t.test('keySlot computes what Redis Cluster computes, hash tags included', async (t) => {
    // Reference values: CLUSTER KEYSLOT on Redis 7 (and the cluster spec's CRC16 test vector).
    t.equal(keySlot('123456789'), 12739);
    t.equal(keySlot('foo'), 12182);
    t.equal(keySlot('{user1000}.following'), keySlot('user1000'));
    t.equal(keySlot('foo{}{bar}'), keySlot('foo{}{bar}'), 'an empty tag hashes the whole key');
    t.not(keySlot('foo{}{bar}'), keySlot('bar'));
    t.equal(keySlot('foo{{bar}}zap'), keySlot('{bar'));
  });

  t.test('every key outside a tree carries its own hash tag, tree keys their root one', async (t) => {
    const keys = keyLayout('mesh') as unknown as Record<string, (...a: string[]) => string>;
    const channels = Object.keys(keys).filter((k) => k.endsWith('Channel'));
    for (const name of Object.keys(keys)) {
      if (typeof keys[name] !== 'function' || channels.includes(name)) continue;
      const key = keys[name]!('inv_a', 'inv_a-b');
      t.match(key, /^mesh:\{[^{}]+\}/, `${name} (${key}) starts with a hash tag`);
    }
    const layout = keyLayout('mesh');
    const root = 'inv_0123';
    t.equal(keySlot(layout.calls(root, `${root}-x`)), keySlot(layout.events(root)), 'a tree shares one slot');
  });
});

t.test('LuaLoader', async (t) => {
  // The Lua loader (src/redis/lua-loader.ts) on folders written here: includes resolved by name,
  // recursively and once each, a cycle or a missing include refused naming the file, constants from
  // its table only, inserts given by the caller, and a workspace's dist/ read from its src/.

  /** A folder of .lua files: `files` maps a path under it to its text. */
  function folder(files: Record<string, string>): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lua-loader-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    for (const [name, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
      fs.writeFileSync(path.join(dir, name), text);
    }
    return dir;
  }

  t.test('includes are resolved by name, recursively, each once, in the order first met', async (t) => {
    const dir = folder({
      'step.lua': '--- @include "b"\n--- @include "a"\nreturn a() + b()\n',
      'includes/a.lua': '--- @include "c"\nlocal function a() return c() end\n',
      'includes/b.lua': '--- @include "c"\nlocal function b() return c() end\n',
      'includes/c.lua': 'local function c() return 1 end\n',
    });
    const lua = new LuaLoader([dir]);
    t.equal(
      lua.text('step'),
      [
        'local function c() return 1 end',
        'local function b() return c() end',
        'local function a() return c() end',
        'return a() + b()',
        '',
      ].join('\n'),
    );
    t.same(lua.script('step', 2), { numberOfKeys: 2, lua: lua.text('step') });
    t.same(lua.names(), ['step']);
    t.same(lua.includeNames(), ['a', 'b', 'c']);
  });

  t.test('an include cycle is refused, naming the files', async (t) => {
    const dir = folder({
      'step.lua': '--- @include "a"\nreturn 1\n',
      'includes/a.lua': '--- @include "b"\n',
      'includes/b.lua': '--- @include "a"\n',
    });
    t.throws(
      () => new LuaLoader([dir]).text('step'),
      /lua include cycle: .*step\.lua -> .*a\.lua -> .*b\.lua -> .*a\.lua/,
    );
  });

  t.test('a missing include is refused, naming the file that includes it', async (t) => {
    const dir = folder({
      'step.lua': 'return 1\n',
      'includes/a.lua': '--- @include "gone"\n',
      'b.lua': '--- @include "a"\n',
    });
    t.throws(() => new LuaLoader([dir]).text('b'), /lua .*includes\/a\.lua: no includes\/gone\.lua in /);
    t.throws(() => new LuaLoader([dir]).text('absent'), /lua absent: no absent\.lua in /);
  });

  t.test("constants come from the loader's table, declared once as locals", async (t) => {
    const dir = folder({
      'step.lua': '--- @const N\n--- @include "a"\n--- @const S\n--- @const L\nreturn N\n',
      'includes/a.lua': '--- @const N\nlocal function a() return N end\n',
      'odd.lua': '--- @const UNKNOWN\nreturn 1\n',
    });
    const lua = new LuaLoader([dir], { N: 100_000, S: "it's a\\b", L: ['x', 'y'] });
    t.equal(
      lua.text('step'),
      [
        'local N = 100000',
        'local function a() return N end',
        "local S = 'it\\'s a\\\\b'",
        "local L = {'x', 'y'}",
        'return N',
        '',
      ].join('\n'),
    );
    t.throws(() => lua.text('odd'), /lua .*odd\.lua: no constant UNKNOWN in the loader's table/);
    t.throws(() => new LuaLoader([dir], { N: 1.5 }).text('step'), /only integers/);
  });

  t.test("inserts are the caller's text, verbatim, and each must be given", async (t) => {
    const dir = folder({ 'wrap.lua': 'local x = (function()\n--- @insert BODY\nend)()\nreturn x\n' });
    const lua = new LuaLoader([dir]);
    t.equal(
      lua.text('wrap', { BODY: "return '$&$1'" }),
      "local x = (function()\nreturn '$&$1'\nend)()\nreturn x\n",
    );
    t.throws(() => lua.text('wrap'), /lua wrap: nothing given for "--- @insert BODY"/);
  });

  t.test('an extended loader looks in its own folder first, then the one it extends', async (t) => {
    const base = folder({
      'includes/a.lua': '--- @const N\nlocal a = N\n',
      'includes/b.lua': 'local b = 0\n',
    });
    const own = folder({
      'step.lua': '--- @include "a"\n--- @include "b"\nreturn a + b\n',
      'includes/b.lua': 'local b = 1\n',
    });
    const lua = new LuaLoader([base], { N: 1 }).extend(own, { N: 2 });
    t.equal(lua.text('step'), 'local N = 2\nlocal a = N\nlocal b = 1\nreturn a + b\n');
    t.same(lua.names(), ['step']);
  });

  t.test("compiled code in a workspace's dist/ reads the .lua files of its src/", async (t) => {
    const root = folder({ 'src/lua/step.lua': 'return 1\n' });
    t.equal(new LuaLoader([path.join(root, 'dist', 'lua')]).text('step'), 'return 1\n');
  });
});
