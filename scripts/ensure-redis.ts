import { constants } from 'node:fs';
import { access, mkdtemp, realpath, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import tls from 'node:tls';
import { freePortOutside } from './free-port.js';
import type { MeshOutput } from './mesh-output.js';
import { type Service, spawnService } from './spawn-service.js';

/** The Redis the mesh uses: the one at REDIS_URL, or a private `redis-server` child started for it. */
export interface RedisHandle {
  url: string;
  /** The private child, when one was started. */
  service?: Service;
  stop(): Promise<void>;
}

const HOW_TO_GET_REDIS = `Start one and point REDIS_URL at it, for example:
  docker run --rm -p 6379:6379 redis:7            (then: npm start)
  sudo apt-get install redis-server                (Debian/Ubuntu; npm start then runs a private one)
  brew install redis                               (macOS)`;

/**
 * Finds Redis at `url` with a PING; else starts a private `redis-server` (installing it as root) on a
 * port outside `reserved`, the ports the mesh's services will listen on (`pickPort` picks it
 * instead, for tests), trying another port when the server exits before it answers.
 */
export async function ensureRedis(
  url: string,
  say: (line: string) => void,
  output: MeshOutput,
  reserved: Iterable<number> = [],
  opts: { pickPort?: () => Promise<number> } = {},
): Promise<RedisHandle> {
  if (await pingRedis(url)) {
    say(`using Redis at ${url}`);
    return { url, stop: async () => {} };
  }
  say(`no Redis answered at ${url}; starting a private redis-server (in memory, nothing saved)`);
  let bin = await findOnPath('redis-server');
  if (!bin && process.getuid?.() === 0) {
    say(
      "redis-server is not installed: installing Debian's redis-server package (apt-get update && apt-get install -y redis-server)",
    );
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const ok =
      (await run('apt-get', ['update'], env, output)) &&
      (await run('apt-get', ['install', '-y', 'redis-server'], env, output));
    bin = await findOnPath('redis-server');
    if (!ok || !bin) throw new Error(`Installing redis-server with apt-get failed.\n${HOW_TO_GET_REDIS}`);
    say(`installed ${bin}`);
  }
  if (!bin) throw new Error(`No Redis at ${url} and no redis-server on PATH.\n${HOW_TO_GET_REDIS}`);
  const pick = opts.pickPort ?? (() => freePortOutside(reserved));
  // A port free when picked may be taken before redis-server binds it (by any process's outgoing
  // connection, which the OS gives ports from the same range): it exits, and another port is tried.
  for (let attempt = 1; ; attempt++) {
    const port = await pick();
    const started = await startPrivateRedis(bin, port, output);
    if ('url' in started) {
      say(`private Redis ready at ${started.url} (stopped with the mesh)`);
      return started;
    }
    if (started.taken === undefined || attempt === PRIVATE_REDIS_ATTEMPTS)
      throw new Error(`The private redis-server did not start on port ${port} (see its output above).`);
    say(`the private redis-server ${started.taken} on port ${port}; trying another port`);
  }
}

/** How many ports npm start tries for its private Redis, each after one it found taken. */
const PRIVATE_REDIS_ATTEMPTS = 5;

/**
 * A private `redis-server` on `port`, once it answers a PING as itself; else stopped again, saying
 * how the port was `taken` (the server exited, or another server answers there), or nothing when it
 * did not answer within 15 s.
 */
async function startPrivateRedis(
  bin: string,
  port: number,
  output: MeshOutput,
): Promise<RedisHandle | { taken?: string }> {
  // Its real path: Redis reports the directory it works in as getcwd() gives it (on macOS the
  // temporary directory is behind a symlink).
  const dir = await realpath(await mkdtemp(join(tmpdir(), 'agentmesh-redis-')));
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--save',
    '',
    '--appendonly',
    'no',
    // Its start-up notices would fill the terminal; warnings still show.
    '--loglevel',
    'warning',
  ];
  // Out of the terminal's process group: Ctrl-C must not stop Redis before the services have drained.
  const service = spawnService('redis', bin, args, { env: process.env, cwd: dir, output, detached: true });
  const url = `redis://127.0.0.1:${port}`;
  const stop = async () => {
    await service.stop(5000);
    await rm(dir, { recursive: true, force: true });
  };
  for (const end = Date.now() + 15_000; !(await pingRedis(url)); ) {
    if (!service.running || Date.now() > end) {
      const exited = !service.running;
      await stop();
      return exited ? { taken: 'exited before it answered' } : {};
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  // What answered may be another server that held the port, which ours then failed to bind: ours
  // is the one whose directory is the fresh one it was given (a wrapper may run it under another pid).
  if ((await redisDir(url)) !== dir) {
    await stop();
    return { taken: 'found another server answering' };
  }
  return { url, service, stop };
}

/** The most of a `CONFIG GET dir` answer read (a path and a few bytes of framing). */
const CONFIG_MAX_BYTES = 64 * 1024;

/** The directory the Redis at `url` (plain TCP) works in, from `CONFIG GET dir`, or undefined. */
export function redisDir(url: string, timeoutMs = 1000): Promise<string | undefined> {
  const { port, hostname } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ port: Number(port), host: hostname });
    let read = Buffer.alloc(0);
    const done = (value: string | undefined) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('error', () => done(undefined));
    socket.once('close', () => done(undefined));
    socket.once('connect', () => socket.write('CONFIG GET dir\r\n'));
    socket.on('data', (data: Buffer) => {
      read = Buffer.concat([read, data]);
      // The answer: an array of the name and its value, `*2 $3 dir $<n> <n bytes>`, each line CRLF-ended.
      const head = /^\*2\r\n\$3\r\ndir\r\n\$(\d+)\r\n/.exec(read.toString('latin1', 0, 64));
      if (head) {
        const from = head[0].length;
        const to = from + Number(head[1]);
        if (read.length >= to) return done(read.toString('utf8', from, to));
      } else if (read.length >= 64 || read[0] !== 0x2a) return done(undefined); // not that answer
      if (read.length > CONFIG_MAX_BYTES) done(undefined);
    });
  });
}

/** True when a Redis server answers at `url` (any RESP reply counts: auth is the services' business). */
export function pingRedis(url: string, timeoutMs = 1000): Promise<boolean> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(false);
  }
  const port = Number(target.port || 6379);
  const host = target.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  return new Promise((resolve) => {
    const socket =
      target.protocol === 'rediss:'
        ? tls.connect({ port, host, servername: host })
        : net.connect({ port, host });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    // A peer that hangs up without an answer is no Redis (the answer's `data` comes before this).
    socket.once('close', () => done(false));
    socket.once(target.protocol === 'rediss:' ? 'secureConnect' : 'connect', () => socket.write('PING\r\n'));
    socket.once('data', (data: Buffer) => done(data[0] === 0x2b || data[0] === 0x2d)); // '+' or '-'
  });
}

async function findOnPath(name: string): Promise<string | undefined> {
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    try {
      await access(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not in this directory
    }
  }
  return undefined;
}

async function run(
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  output: MeshOutput,
): Promise<boolean> {
  const status = await spawnService(command, command, args, { env, cwd: process.cwd(), output }).exited;
  return status.code === 0;
}
