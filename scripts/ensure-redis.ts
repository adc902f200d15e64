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
 * A private `redis-server` on `port`, once it answers as itself; else stopped again, saying
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
  // What answers may be another server that held the port, which ours then failed to bind: ours is
  // the one working in the fresh directory it was given (a wrapper may run it under another pid).
  for (const end = Date.now() + 15_000; ; ) {
    const answered = await redisDir(url);
    if (answered === dir) return { url, service, stop };
    const exited = !service.running;
    if (answered !== undefined || exited || Date.now() > end) {
      await stop();
      if (answered !== undefined) return { taken: 'found another server answering' };
      return exited ? { taken: 'exited before it answered' } : {};
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * The directory the Redis at `url` works in, from `CONFIG GET dir`: '' when what answered gave no
 * such answer, undefined when nothing answered.
 */
export function redisDir(url: string): Promise<string | undefined> {
  return askRedis(url, 'CONFIG GET dir', (answer) => {
    // An array of the name and its value, `*2 $3 dir $<n> <n bytes>`, each line CRLF-ended.
    const head = /^\*2\r\n\$3\r\ndir\r\n\$(\d+)\r\n/.exec(answer.toString('latin1', 0, 64));
    if (!head) return answer.length >= 64 || answer[0] !== 0x2a ? '' : undefined;
    const to = head[0].length + Number(head[1]);
    return answer.length >= to ? answer.toString('utf8', head[0].length, to) : undefined;
  });
}

/** True when a Redis server answers at `url` (any RESP reply counts: auth is the services' business). */
export async function pingRedis(url: string): Promise<boolean> {
  // '+' or '-': a simple string or an error.
  return (await askRedis(url, 'PING', (answer) => answer[0] === 0x2b || answer[0] === 0x2d)) ?? false;
}

/** The most of an answer askRedis reads. */
const ANSWER_MAX_BYTES = 64 * 1024;

/**
 * Sends one inline command to the Redis at `url` (`rediss:` over TLS) on a connection of its own and
 * reads the answer with `read` (undefined: not whole yet); undefined when the URL does not parse or
 * nothing answers in time: a hang-up, an error, a second, or more than 64 kB.
 */
function askRedis<T>(
  url: string,
  command: string,
  read: (answer: Buffer) => T | undefined,
  timeoutMs = 1000,
): Promise<T | undefined> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(undefined);
  }
  const port = Number(target.port || 6379);
  const host = target.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1';
  return new Promise((resolve) => {
    const socket =
      target.protocol === 'rediss:'
        ? tls.connect({ port, host, servername: host })
        : net.connect({ port, host });
    let answer = Buffer.alloc(0);
    const done = (value: T | undefined) => {
      socket.destroy();
      resolve(value);
    };
    socket.setTimeout(timeoutMs, () => done(undefined));
    socket.once('error', () => done(undefined));
    // A peer that hangs up without a whole answer is no Redis (an answer's `data` comes before this).
    socket.once('close', () => done(undefined));
    socket.once(target.protocol === 'rediss:' ? 'secureConnect' : 'connect', () =>
      socket.write(`${command}\r\n`),
    );
    socket.on('data', (data: Buffer) => {
      answer = Buffer.concat([answer, data]);
      const value = read(answer);
      if (value !== undefined || answer.length > ANSWER_MAX_BYTES) done(value);
    });
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
