import t from 'tap';
import { MAX_CLUSTER_NODES, parseClusterNodes } from '../src/redis/cluster-nodes.js';
import { serviceEnv } from '../src/service-env.js';

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
