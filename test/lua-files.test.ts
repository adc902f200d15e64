// Every .lua file of the source trees (docs/architecture/durability-and-fencing.md) is a script or
// an include of one of the mesh's loaders, starts with its header, is ASCII (MONITOR's text is
// hashed byte by byte), and compiles in Redis: no Lua linter is pinned in npm, so SCRIPT LOAD
// against this test's own redis-server catches a syntax error. The fast path's steps, BullMQ's text
// with the mesh's in it, compile too.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { FAST_STEPS, header, LOADERS, NOTHING, sha1 } from './support/lua-steps.js';
import { startRedisClient } from './support/redis-server.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/** Every .lua file under `dir` (a path from the root), its path from the root. */
function luaFiles(dir: string): string[] {
  if (!fs.existsSync(path.join(ROOT, dir))) return [];
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) return luaFiles(file);
    return e.name.endsWith('.lua') ? [file] : [];
  });
}

t.test('every .lua file is in a loader, ASCII, and compiles in Redis', async (t) => {
  const client = await startRedisClient(t);
  const found = ['packages', 'services'].flatMap((top) =>
    fs.readdirSync(path.join(ROOT, top)).flatMap((ws) => luaFiles(path.join(top, ws, 'src'))),
  );
  const loaded = LOADERS.flatMap(([dir, lua]) => [
    ...lua.names().map((n) => `${dir}/${n}.lua`),
    ...lua.includeNames().map((n) => `${dir}/includes/${n}.lua`),
  ]);
  t.same(found.sort(), [...loaded].sort(), 'each file is a script or include of a loader');
  for (const file of found)
    t.ok(
      [...fs.readFileSync(path.join(ROOT, file))].every((byte) => byte < 0x80),
      `${file} is ASCII (MONITOR's text is hashed byte by byte)`,
    );
  const texts = LOADERS.flatMap(([dir, lua]) => [
    ...lua.names().map((n) => [`${dir}/${n}.lua`, lua.text(n, NOTHING)]),
    ...lua.includeNames().map((n) => [`${dir}/includes/${n}.lua`, lua.fragment(n)]),
  ]);
  for (const [dir, lua] of LOADERS) {
    for (const n of lua.names()) t.not(header(lua, n), '', `${dir}/${n}.lua starts with its header`);
  }
  for (const [file, text] of [...texts, ...Object.entries(FAST_STEPS)]) {
    t.equal(await client.call('SCRIPT', 'LOAD', text!), sha1(text!), `${file} compiles`);
  }
});
