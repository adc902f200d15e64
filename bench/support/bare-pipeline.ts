import type { ChildProcess } from 'node:child_process';
import { Agent } from 'undici';
import { forkMain } from './fork-main.js';
import { type ClientName, postJson } from './mesh-client.js';
import { stopOnExit } from './stop-on-exit.js';

/** What a bare run does: answer at once, or delegate once or to 8 children side by side first. */
export type BareAgent = 'single' | 'parent' | 'fan';

/** A run's hops with no mesh in them: a bare gateway and a bare runner, each its own process. */
export interface BarePipeline {
  /**
   * One run through the bare gateway of `single`, or of `parent` (one delegation in stock BullMQ
   * steps), through either client the mesh's figures are read with (mesh-client.ts; undici's
   * `request` unless `via` says `fetch`); resolves with the model's answer.
   */
  invoke(agent?: BareAgent, via?: ClientName): Promise<string>;
  gatewayPid: number;
  /** Its runners' processes: one, or as many as it was started with. */
  runnerPids: number[];
  stop(): Promise<void>;
}

/** How many bare runners take the jobs (the mesh ships 2), and the prefix of every key of theirs. */
export interface BareOptions {
  runners?: number;
  prefix?: string;
}

/**
 * The floor the round trips stand on (docs/reference/benchmarks.md): the same processes and hops as a run
 * through the mesh — the client's HTTP request to a gateway, a Redis write and a BullMQ job to a
 * worker in another process, its request to the fake model, a write and a PUBLISH back, the answer —
 * with none of the mesh's own work; and for `parent`, a delegation's hops too: a child job, the
 * parent parked on it, the child's completion moving the parent back (bare-runner-main.ts). On the
 * mesh's Redis, under keys of its own (`prefix`, default `bench-bare`). With two runners or more,
 * each blocks on the queue as a mesh runner does and Redis wakes the one that has waited longest:
 * a sequential client's runs then go to them in turns, as they go to the mesh's runners.
 */
export async function startBarePipeline(
  redisUrl: string,
  modelUrl: string,
  { runners: count = 1, prefix = 'bench-bare' }: BareOptions = {},
): Promise<BarePipeline> {
  const env = { REDIS_URL: redisUrl, MODEL_URL: modelUrl, BARE_PREFIX: prefix };
  const runners: Awaited<ReturnType<typeof forkMain>>[] = [];
  for (let i = 0; i < count; i++)
    runners.push(await forkMain(new URL('./bare-runner-main.ts', import.meta.url), env));
  const gateway = await forkMain(new URL('./bare-gateway-main.ts', import.meta.url), env);
  const base = (gateway.first as { url: string }).url;
  const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
  const bodies = {
    single: JSON.stringify({ prompt: 'go' }),
    parent: JSON.stringify({ prompt: 'go', agent: 'parent' }),
    fan: JSON.stringify({ prompt: 'go', agent: 'fan' }),
  };
  const stop = async (child: ChildProcess) => {
    const gone = new Promise((r) => child.once('exit', r));
    child.disconnect();
    await Promise.race([gone, new Promise((r) => setTimeout(r, 5000).unref())]);
    child.kill('SIGKILL');
    stopOnExit.untrack(child.pid!);
  };
  return {
    invoke: async (agent = 'single', via = 'undici') => {
      const answer = await postJson(`${base}/invoke`, bodies[agent], via, dispatcher);
      const view = answer.view as { status?: string; output?: string };
      if (answer.status !== 200 || view.status !== 'succeeded') throw new Error(`bare run: ${answer.status}`);
      return view.output!;
    },
    gatewayPid: gateway.child.pid!,
    runnerPids: runners.map((r) => r.child.pid!),
    stop: async () => {
      await Promise.all([stop(gateway.child), ...runners.map((r) => stop(r.child))]);
      await dispatcher.close();
    },
  };
}

/** The floors' runner counts: one, and as many as the mesh ships. */
export const FLOOR_RUNNERS = [1, 2] as const;

/**
 * Runs `use` with a bare pipeline of each of FLOOR_RUNNERS' sizes on the mesh's Redis, under keys of
 * `<prefix>-<runners>`, each warmed by `warm` first; stops them all after, also when `use` throws.
 */
export async function withBareFloors<T>(
  redisUrl: string,
  modelUrl: string,
  prefix: string,
  warm: (pipeline: BarePipeline) => Promise<void>,
  use: (floors: BarePipeline[]) => Promise<T>,
): Promise<T> {
  const floors: BarePipeline[] = [];
  try {
    for (const runners of FLOOR_RUNNERS) {
      const pipeline = await startBarePipeline(redisUrl, modelUrl, {
        runners,
        prefix: `${prefix}-${runners}`,
      });
      floors.push(pipeline);
      await warm(pipeline);
    }
    return await use(floors);
  } finally {
    await Promise.all(floors.map((b) => b.stop()));
  }
}
