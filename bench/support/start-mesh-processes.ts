import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyLayout } from '@agentmesh/shared';
import { freePort, startRedis } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import { Redis } from 'ioredis';
import { benchConfig } from './bench-config.js';
import { type Service, type ServiceMode, spawnService } from './spawn-service.js';
import { stopOnExit } from './stop-on-exit.js';

/** The mesh under test: Redis, tool-host, gateway and runners, each its own process on loopback. */
export interface MeshProcesses {
  gatewayUrl: string;
  /** A client on the mesh's Redis, for INFO and queue counts. */
  redis: Redis;
  redisUrl: string;
  redisPid: number;
  gateway: Service;
  toolHost: Service;
  runners: Service[];
  /** Every process the mesh is made of, Redis included: the pids whose CPU a run costs. */
  pids(): number[];
  /** The same processes, each by its role: gateway, redis, tool-host, runner 1, runner 2, … */
  processes(): [string, number][];
  /** Replaces all runners by `n` new ones with `env` added, and waits until they serve. */
  setRunners(n: number, env?: Record<string, string>): Promise<void>;
  /** Starts one more runner with `env` added, and waits until it serves. */
  addRunner(env?: Record<string, string>): Promise<void>;
  /** SIGKILLs one runner (by pid) and forgets it. */
  killRunner(pid: number): Promise<void>;
  /** Where every service writes its warnings and errors. */
  logDir: string;
  /** The environment every service of this mesh starts with (config, Redis, ports). */
  env: Record<string, string>;
}

/** How the mesh's services start: see startMeshProcesses. */
export interface MeshStartOptions {
  /** MESH_QUEUE_FASTPATH of every service (default on, its shipped default). */
  queueFastPath?: 'on' | 'off';
  /** Compiled (default), or from the sources through tsx. */
  mode?: ServiceMode;
  /** The checkout whose services run (default this one): bench/ab.ts runs another beside it. */
  root?: string;
  /** Variables every service starts with besides the mesh's own (bench/ab.ts's per-side settings). */
  env?: Record<string, string>;
}

/**
 * Starts a private redis-server (no persistence), the tool-host, `runners` runners and the gateway,
 * each with the shipped defaults (spawn-service.ts) unless a figure sets a variable of its own;
 * compiled, as production runs them, unless `mode` says `tsx` (a test of the figures, unbuilt).
 */
export async function startMeshProcesses(
  modelUrl: string,
  depth: number,
  runners: number,
  { queueFastPath = 'on', mode = 'dist', root, env: extraEnv = {} }: MeshStartOptions = {},
): Promise<MeshProcesses> {
  const redisServer = await startRedis(); // --save '' --appendonly no, on a free port
  stopOnExit.add(() => redisServer.stop());
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  stopOnExit.add(() => redis.disconnect());
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info('server'))![1]);
  stopOnExit.track(redisPid);
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-bench-'));
  const configFile = path.join(logDir, 'mesh.yaml');
  fs.writeFileSync(configFile, benchConfig(modelUrl, depth));
  const [gatewayPort, toolHostPort] = [await freePort(), await freePort()];
  const env = {
    MESH_CONFIG: configFile,
    REDIS_URL: redisServer.url,
    GATEWAY_PORT: String(gatewayPort),
    TOOL_HOST_PORT: String(toolHostPort),
    TOOL_HOST_URL: `http://127.0.0.1:${toolHostPort}`,
    MESH_QUEUE_FASTPATH: queueFastPath,
    ...extraEnv,
  };
  const keys = keyLayout('mesh');
  let count = 0;
  const start = (kind: 'gateway' | 'runner' | 'tool-host', extra: Record<string, string> = {}) => {
    const log = path.join(logDir, `${kind}-${count++}.log`);
    const service = spawnService(kind, { ...env, ...extra }, log, mode, root);
    // SIGKILL at the end, unless profiles must be written on a clean exit (BENCH_CPU_PROF).
    stopOnExit.add(() => service.stop(process.env.BENCH_CPU_PROF ? 10_000 : 0));
    return service;
  };
  const logsOf = (s: Service) =>
    fs
      .readdirSync(logDir)
      .filter((f) => f.startsWith(s.name))
      .map((f) => fs.readFileSync(path.join(logDir, f), 'utf8'))
      .join('');
  // A runner serves once its heartbeat (its id holds its pid) is in the set of an agent it hosts.
  const serving = async (runner: Service, agent: string) => {
    const live = await redis.zrangebyscore(keys.agentRunners(agent), Date.now(), '+inf');
    if (runner.proc.exitCode !== null) throw new Error(`a runner exited at start:\n${logsOf(runner)}`);
    return live.some((id) => id.includes(`-${runner.pid}-`));
  };
  const mesh: MeshProcesses = {
    gatewayUrl: `http://127.0.0.1:${gatewayPort}`,
    env,
    redis,
    redisUrl: redisServer.url,
    redisPid,
    toolHost: start('tool-host'),
    runners: [],
    gateway: start('gateway'),
    pids: () => mesh.processes().map(([, pid]) => pid),
    processes: () => [
      ['gateway', mesh.gateway.pid],
      ['redis', redisPid],
      ['tool-host', mesh.toolHost.pid],
      ...mesh.runners.map((r, i): [string, number] => [`runner ${i + 1}`, r.pid]),
    ],
    setRunners: async (n, extra = {}) => {
      await Promise.all(mesh.runners.splice(0).map((r) => r.stop()));
      await Promise.all(Array.from({ length: n }, () => mesh.addRunner(extra)));
    },
    addRunner: async (extra = {}) => {
      const runner = start('runner', extra);
      mesh.runners.push(runner);
      const agent = extra.RUNNER_AGENTS?.split(',')[0] ?? 'single';
      await waitUntil(
        () => serving(runner, agent),
        120_000,
        () => `runner ${runner.pid} to serve:\n${logsOf(runner)}`,
      );
    },
    killRunner: async (pid) => {
      const i = mesh.runners.findIndex((r) => r.pid === pid);
      if (i < 0) throw new Error(`runner ${pid} is not one of the bench's`);
      const [runner] = mesh.runners.splice(i, 1);
      await runner!.stop(0);
    },
    logDir,
  };
  await mesh.setRunners(runners);
  await waitUntil(
    async () => (await fetch(`${mesh.gatewayUrl}/readyz`)).status === 200,
    120_000,
    () => `the gateway to be ready:\n${logsOf(mesh.gateway)}`,
  );
  return mesh;
}
