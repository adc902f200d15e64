// A runner's heartbeat (heartbeat.ts) puts it in each hosted agent's runner set and in the mesh's
// set, with an expiry three beats out. Withdrawn, it leaves the agents' sets, and the mesh's only
// when it drained: a runner that leaves jobs it holds stays there for the gone-runner watch.
import { keyLayout, type Logger } from '@agentmesh/shared';
import { startRedis } from '@agentmesh/test-support/redis-server';
import { Redis } from 'ioredis';
import t from 'tap';
import { startHeartbeat } from '../src/process/heartbeat.js';

const server = await startRedis();
t.teardown(() => server.stop());
const redis = new Redis(server.url);
t.teardown(() => redis.disconnect());
const log = { debug() {}, info() {}, warn() {}, error() {} } as Logger;

for (const drained of [true, false]) {
  t.test(
    `a runner withdrawn ${drained ? 'after' : 'without'} a drain leaves the agents' sets${drained ? ' and the mesh set' : ', not the mesh set'}`,
    async (t) => {
      const keys = keyLayout(`beat-${drained}`);
      const before = Date.now();
      const beat = await startHeartbeat(redis, keys, ['a', 'b'], 'r1', log);
      t.teardown(() => beat.stop());
      for (const set of [keys.runners(), keys.agentRunners('a'), keys.agentRunners('b')]) {
        const expiry = Number(await redis.zscore(set, 'r1'));
        t.ok(expiry >= before + 6000, `${set}: expires three beats out`);
      }
      beat.stop();
      await beat.withdraw(drained);
      t.equal(await redis.zcard(keys.agentRunners('a')), 0);
      t.equal(await redis.zcard(keys.agentRunners('b')), 0);
      t.equal(await redis.zcard(keys.runners()), drained ? 0 : 1);
    },
  );
}
