// The Lua fragments the mesh's steps share, run in a real Redis: is-terminal.lua is given the
// TypeScript side's list of terminal statuses (a loader constant) and answers as isTerminal does, for every status.

import { startRedis } from '@agentmesh/test-support/redis-server';
import { Redis } from 'ioredis';
import t from 'tap';
import { meshLua } from '../src/store/lua-steps.js';
import { InvocationStatus, isTerminal, TERMINAL_STATUSES } from '../src/wire/invocation-view.js';

const IS_TERMINAL = meshLua.fragment('is-terminal');
const server = await startRedis();
const redis = new Redis(server.url);
t.teardown(async () => {
  redis.disconnect();
  await server.stop();
});

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
