import { isIP } from 'node:net';

/** The connection part of ioredis options (what BullMQ's `connection` takes). */
export interface RedisConnectionOptions {
  host?: string;
  port?: number;
  path?: string;
  username?: string;
  password?: string;
  db?: number;
  tls?: { servername?: string };
}

/**
 * The ioredis options of a `REDIS_URL`, for connections BullMQ builds itself (its workers take
 * options, not a URL). Keeps what `new Redis(url)` keeps: `rediss://` means TLS (SNI set to the
 * host name unless the host is an IP address), user, password and db; a path (`/run/redis.sock`)
 * is a Unix socket.
 */
export function redisOptions(url: string): RedisConnectionOptions {
  if (url.startsWith('/')) return { path: url };
  const u = new URL(url);
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    throw new Error(`REDIS_URL must start with redis:// or rediss://, got ${u.protocol}//`);
  const host = u.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1'; // IPv6 hosts come bracketed
  const db = u.pathname.length > 1 ? Number(u.pathname.slice(1)) : undefined;
  return {
    host,
    port: Number(u.port || 6379),
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(db !== undefined && Number.isInteger(db) ? { db } : {}),
    ...(u.protocol === 'rediss:' ? { tls: isIP(host) ? {} : { servername: host } } : {}),
  };
}
