// The Lua fragments the mesh's steps share, run in a real Redis: IS_TERMINAL is built from the
// TypeScript side's list of terminal statuses and answers as isTerminal does, for every status.

import { startRedis } from '@agentmesh/test-support/redis-server';
import { Redis } from 'ioredis';
import t from 'tap';
import { IS_TERMINAL } from '../src/store/lua-fragments.js';
import { InvocationStatus, isTerminal, TERMINAL_STATUSES } from '../src/wire/invocation-view.js';

const server = await startRedis();
const redis = new Redis(server.url);
t.teardown(async () => {
  redis.disconnect();
  await server.stop();
});

t.test('IS_TERMINAL agrees with isTerminal on every status, and on none', async (t) => {
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
