import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';

/** Listens on `port` (0: one the OS picks) on loopback and closes again: the port, or undefined when taken. */
function listenedPort(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.unref();
    s.on('error', () => resolve(undefined));
    s.listen(port, '127.0.0.1', () => {
      const { port: held } = s.address() as net.AddressInfo;
      s.close(() => resolve(held));
    });
  });
}

/**
 * The ports handed out: below the kernel's ephemeral range (ip_local_port_range), from which every
 * outgoing connection and every `listen(0)` takes its port. A port the OS picked there was free only
 * at that moment: in the second it took a service process to start and listen on it, one of the
 * thousands of connections the tests open could take it first (a tool-host then failed with
 * EADDRINUSE). Below the range only a listener asking for the very port takes it.
 */
function quietRange(): [number, number] | undefined {
  try {
    const low = Number(
      fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0],
    );
    return low - 1 >= 11_024 ? [low - 10_000, low - 1] : undefined;
  } catch {
    return undefined;
  }
}
/** Where freePort picks (both ends included), undefined where the ephemeral range leaves no room below it. */
export const QUIET_PORTS = quietRange();

const handedOut = new Set<number>();

/**
 * A port nothing listens on now, never one this process was given before (the kernel may hand the
 * same free port to two calls in a row), and where it can, one no outgoing connection will take
 * before its service listens (quietRange); else one the OS picks.
 */
export async function freePort(): Promise<number> {
  for (let attempt = 0; ; attempt++) {
    const wanted =
      QUIET_PORTS && attempt < 200
        ? QUIET_PORTS[0] + Math.floor(Math.random() * (QUIET_PORTS[1] - QUIET_PORTS[0] + 1))
        : 0;
    const port = await listenedPort(wanted);
    if (port !== undefined && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** A private redis-server on a free port; never the machine's shared one. */
export interface TestRedis {
  port: number;
  url: string;
  /** SIGKILLs and starts it again on the same port and directory (AOF keeps data when enabled). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Spawns `redis-server` with `argsFor(port)` on a free port and waits for its PING. A port is free
 * when asked and may be taken a moment later by another test file's process (or, for a cluster
 * node, its bus port, `port + 10000`): a server that exits before it answers is started again on
 * another port, up to five times.
 */
export async function spawnRedis(
  argsFor: (port: number) => string[],
  opts: { clusterBus?: boolean } = {},
): Promise<{ port: number; proc: ChildProcess }> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    if (opts.clusterBus && !(port + 10_000 <= 65_535 && (await portIsFree(port + 10_000)))) continue;
    const proc = spawn('redis-server', argsFor(port), { stdio: 'ignore' });
    if (await pingOrExit(port, proc)) return { port, proc };
    if (attempt >= 5) throw new Error(`redis-server exited before it answered on ${port}, five times`);
  }
}

/** Starts a redis-server for one test file; stop it in t.teardown. */
export async function startRedis(opts: { aof?: boolean } = {}): Promise<TestRedis> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-test-redis-'));
  const argsFor = (port: number) => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
    args.push(...(opts.aof ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']));
    return args;
  };
  let { port, proc } = await spawnRedis(argsFor);
  const kill = () =>
    new Promise<void>((resolve) => {
      if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
      proc.once('exit', () => resolve());
      proc.kill('SIGKILL');
    });
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    restart: async () => {
      await kill();
      // The same port: the clients reconnect to it. A port taken meanwhile fails loudly here.
      proc = spawn('redis-server', argsFor(port), { stdio: 'ignore' });
      if (!(await pingOrExit(port, proc))) throw new Error(`redis-server on ${port} did not restart`);
    },
    stop: async () => {
      await kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.unref();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** True once the server on `port` answers PING; false when `proc` exits first. Throws after 10 s. */
async function pingOrExit(port: number, proc: ChildProcess): Promise<boolean> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (proc.exitCode !== null || proc.signalCode !== null) return false;
    if (await ping(port)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  throw new Error(`redis-server on ${port} did not start`);
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1');
    s.on('error', () => resolve(false));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d) => {
      s.destroy();
      resolve(d.toString().startsWith('+PONG'));
    });
  });
}

/**
 * A redis-server of its own (startRedis) and an ioredis client on it, both gone at `t`'s teardown:
 * the client disconnected first, then the server stopped.
 */
export async function startRedisClient(t: { teardown(fn: () => unknown): void }): Promise<Redis> {
  const server = await startRedis();
  const redis = new Redis(server.url);
  t.teardown(async () => {
    redis.disconnect();
    await server.stop();
  });
  return redis;
}
