// The Lua loader (src/redis/lua-loader.ts) on folders written here: includes resolved by name,
// recursively and once each, a cycle or a missing include refused naming the file, constants from
// its table only, inserts given by the caller, and a workspace's dist/ read from its src/.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { LuaLoader } from '../src/redis/lua-loader.js';

/** A folder of .lua files: `files` maps a path under it to its text. */
function folder(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lua-loader-'));
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
  const base = folder({ 'includes/a.lua': '--- @const N\nlocal a = N\n', 'includes/b.lua': 'local b = 0\n' });
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
