import t from 'tap';
import { redisOptions } from '../src/redis-options.js';

t.test('a rediss:// URL keeps TLS with the host as server name, and its user, password and db', async (t) => {
  t.strictSame(redisOptions('rediss://mesh:s%40cret@cache.example.com:6380/2'), {
    host: 'cache.example.com',
    port: 6380,
    username: 'mesh',
    password: 's@cret',
    db: 2,
    tls: { servername: 'cache.example.com' },
  });
});

t.test('a rediss:// URL to an IP address keeps TLS without a server name', async (t) => {
  t.strictSame(redisOptions('rediss://10.0.0.7'), { host: '10.0.0.7', port: 6379, tls: {} });
  t.strictSame(redisOptions('rediss://[::1]:6390'), { host: '::1', port: 6390, tls: {} });
});

t.test('a redis:// URL has no TLS; a password without a user is kept', async (t) => {
  t.strictSame(redisOptions('redis://:pw@127.0.0.1:7000/0'), {
    host: '127.0.0.1',
    port: 7000,
    password: 'pw',
    db: 0,
  });
  t.strictSame(redisOptions('redis://localhost'), { host: 'localhost', port: 6379 });
});

t.test('a path is a Unix socket; any other scheme is refused', async (t) => {
  t.strictSame(redisOptions('/run/redis.sock'), { path: '/run/redis.sock' });
  t.throws(() => redisOptions('http://127.0.0.1:6379'), /redis:\/\/ or rediss:\/\//);
});
