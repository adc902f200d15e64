import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** A private redis-server on a free port; never the machine's shared one. */
export interface TestRedis {
  port: number;
  url: string;
  /** SIGKILLs and starts it again on the same port and directory (AOF keeps data when enabled). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a redis-server for one test file; stop it in t.teardown. */
export async function startRedis(opts: { aof?: boolean } = {}): Promise<TestRedis> {
  const port = await freePort();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-test-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  args.push(...(opts.aof ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no']));
  let proc: ChildProcess;
  const launch = async () => {
    proc = spawn('redis-server', args, { stdio: 'ignore' });
    await waitForPing(port);
  };
  await launch();
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
      await launch();
    },
    stop: async () => {
      await kill();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function waitForPing(port: number): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (await ping(port)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
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
