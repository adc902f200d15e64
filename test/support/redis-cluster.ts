import { type ChildProcess, execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { spawnRedis } from './redis-server.js';

const run = promisify(execFile);

/** A private Redis Cluster of local redis-server processes, one master per node, no replicas. */
export interface TestRedisCluster {
  ports: number[];
  /** The seed nodes as `REDIS_CLUSTER_NODES` takes them (`127.0.0.1:p1,127.0.0.1:p2,…`). */
  nodesEnv: string;
  /** The same as options of the services' builders (`redisClusterNodes`). */
  nodes: { host: string; port: number }[];
  /** SIGKILLs every node and removes their directories. */
  stop(): Promise<void>;
}

/**
 * Starts `masters` (default 3) cluster-enabled redis-servers on free ports, joins them with
 * `redis-cli --cluster create` (no replicas) and waits until every node reports
 * `cluster_state:ok`. Stop it in t.teardown. Needs `redis-cli` (Debian: redis-tools, which the
 * redis-server package depends on).
 */
export async function startRedisCluster(masters = 3): Promise<TestRedisCluster> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-test-cluster-'));
  const ports: number[] = [];
  const procs: ChildProcess[] = [];
  const stop = async () => {
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once('exit', () => resolve());
            p.kill('SIGKILL');
          }),
      ),
    );
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    while (ports.length < masters) {
      const node = await spawnRedis(
        (port) => {
          const nodeDir = path.join(dir, String(port));
          fs.mkdirSync(nodeDir, { recursive: true });
          const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', nodeDir];
          args.push('--cluster-enabled', 'yes', '--cluster-config-file', path.join(nodeDir, 'nodes.conf'));
          args.push('--cluster-node-timeout', '2000', '--save', '', '--appendonly', 'no');
          return args;
        },
        { clusterBus: true },
      );
      procs.push(node.proc);
      ports.push(node.port);
    }
    const addresses = ports.map((p) => `127.0.0.1:${p}`);
    await run(
      'redis-cli',
      ['--cluster', 'create', ...addresses, '--cluster-replicas', '0', '--cluster-yes'],
      {
        timeout: 30_000,
      },
    );
    for (const port of ports) {
      await until(
        async () => (await cli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
        `node ${port} ok`,
      );
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    ports,
    nodesEnv: ports.map((p) => `127.0.0.1:${p}`).join(','),
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    stop,
  };
}

async function cli(port: number, ...args: string[]): Promise<string> {
  try {
    return (await run('redis-cli', ['-p', String(port), ...args], { timeout: 5_000 })).stdout;
  } catch {
    return '';
  }
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`redis cluster: ${what} not reached in 20 s`);
}
