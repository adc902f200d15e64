// A change against a baseline, in turns (docs/architecture/where-the-time-goes.md, "Comparing a
// change in turns"): two meshes side by side, each started as `npm run bench` starts it (its own
// Redis, tool-host, gateway and 2 runners, the shipped defaults) against one fake model (latency 0 unless set),
// and each agent's sequential round trips timed in blocks of 20 with the two sides taking turns, so a
// change of the machine's speed (up to 1.5 × from one minute to the next on a 2-core VM) reaches both
// sides alike. Each side's CPU per run is read from /proc over its own blocks (its Redis, gateway,
// tool-host and runners, each apart). A change too small to see across two runs of `npm run bench`
// shows here.
//
//   git worktree add ../base main && (cd ../base && npm ci && npm run -s build)
//   npm run -s build && BENCH_AB_BASE=../base npx tsx bench/ab.ts
//   npm run -s build && BENCH_AB_ENV_B=LOG_LEVEL=warn npx tsx bench/ab.ts   # a setting, one checkout
//
// Side A is this checkout's compiled services; side B is BENCH_AB_BASE's (another checkout, built,
// its node_modules installed), or this one's again. BENCH_AB_ENV_A / BENCH_AB_ENV_B: `K=V,K=V`
// variables of that side's services; BENCH_AB_RUNNERS_A / _B: its runners (2); BENCH_AB_EXTRA_RUNNER_A
// / _B: agents (RUNNER_AGENTS) of one more runner it starts, which hosts only those. BENCH_AB_AGENTS
// (single,parent), BENCH_RUNS per side and agent (2000), BENCH_WARMUP runs of each side first (2000),
// BENCH_AB_CLIENT (undici or fetch), BENCH_AB_LATENCY (the model's latency in ms for the timed runs;
// 0, and the warm-up always at 0). BENCH_AB_WINDOW (seconds) reads a steady load instead of blocks:
// BENCH_AB_CLIENTS clients kept busy on each side in turn, BENCH_AB_TURNS turns a side (4), each read
// over its last BENCH_AB_WINDOW seconds after a ramp of a third of that (3 s at most); BENCH_RUNS is
// then unused.
import path from 'node:path';
import { type AbResult, abTurns, abWindows, parseSideEnv, startAbSide } from './support/ab-turns.js';
import type { ClientName } from './support/mesh-client.js';
import { startBenchModel } from './support/start-bench-model.js';
import { stopOnExit } from './support/stop-on-exit.js';

const env = process.env;
const agents = (env.BENCH_AB_AGENTS || 'single,parent').split(',').map((a) => a.trim());
const runs = Number(env.BENCH_RUNS || 2000);
const warmup = Number(env.BENCH_WARMUP || 2000);
const client = (env.BENCH_AB_CLIENT || 'undici') as ClientName;
const clients = countOf('BENCH_AB_CLIENTS', 1);
const latencyMs = Number(env.BENCH_AB_LATENCY || 0);
const windowS = Number(env.BENCH_AB_WINDOW || 0);
if (!Number.isFinite(windowS) || windowS < 0)
  throw new Error(`BENCH_AB_WINDOW must be a number of seconds ≥ 0, got "${env.BENCH_AB_WINDOW}"`);
const turns = countOf('BENCH_AB_TURNS', 4);
if (!Number.isFinite(latencyMs) || latencyMs < 0)
  throw new Error(`BENCH_AB_LATENCY must be a number of ms ≥ 0, got "${env.BENCH_AB_LATENCY}"`);
const note = (text: string) => process.stderr.write(`ab: ${text}\n`);

process.on('SIGINT', () => void stopOnExit.run().finally(() => process.exit(130)));
try {
  const model = await startBenchModel(1);
  const base = env.BENCH_AB_BASE ? path.resolve(env.BENCH_AB_BASE) : undefined;
  const side = async (name: string, root: string | undefined, sideEnv: string | undefined) => {
    const runners = countOf(`BENCH_AB_RUNNERS_${name}`, 2);
    const extraRunnerAgents = env[`BENCH_AB_EXTRA_RUNNER_${name}`];
    const extra = extraRunnerAgents ? ` and one hosting ${extraRunnerAgents}` : '';
    note(`${name}: ${root ?? 'this checkout'} ${sideEnv ?? ''} (${runners} runners${extra})`);
    return startAbSide(name, model.url, {
      root,
      env: parseSideEnv(sideEnv),
      runners,
      extraRunnerAgents,
      client,
    });
  };
  const sides = [await side('A', undefined, env.BENCH_AB_ENV_A), await side('B', base, env.BENCH_AB_ENV_B)];
  note(`warming up: ${warmup} runs a side`);
  for (const s of sides)
    await Promise.all(
      Array.from({ length: 10 }, async (_, c) => {
        for (let i = c; i < warmup; i += 10) await s.invoke(agents[i % agents.length]!);
      }),
    );
  if (latencyMs > 0) await model.setLatency(latencyMs);
  for (const agent of agents) {
    if (windowS > 0) {
      const windowMs = windowS * 1000;
      note(`${agent}: ${clients} clients, ${turns} windows of ${windowS} s a side, in turns`);
      print(
        agent,
        await abWindows(sides, agent, clients, { turns, windowMs, rampMs: Math.min(3000, windowMs / 3) }),
      );
      continue;
    }
    note(`${agent}: ${runs} runs a side, ${clients} at a time, in turns`);
    print(agent, await abTurns(sides, agent, runs, clients));
  }
} finally {
  await stopOnExit.run();
}

/** A variable that counts something (runners, clients): an integer ≥ 1, `fallback` when unset. */
function countOf(name: string, fallback: number): number {
  const raw = env[name] || String(fallback);
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be an integer ≥ 1, got "${raw}"`);
  return n;
}

function print(agent: string, [a, b]: AbResult[]): void {
  const ms = (x: number) => x.toFixed(3);
  const line = (r: AbResult) =>
    `${r.name}: p50 ${ms(r.wallMs.p50)} ms (p10–p90 ${ms(r.wallMs.p10)}–${ms(r.wallMs.p90)}), ` +
    `CPU per run ${ms(r.cpuPerRunMs)} ms (${Object.entries(r.cpuPerRunByProcessMs)
      .map(([role, x]) => `${role} ${ms(x)}`)
      .join(', ')}), ${r.runsPerSecond.toFixed(1)} runs/s`;
  const at = `${latencyMs > 0 ? `, model latency ${latencyMs} ms` : ''}${windowS > 0 ? `, steady, ${turns} windows of ${windowS} s a side` : ''}`;
  console.log(`\n## ${agent} (client: ${client}, ${clients} at a time${at})\n${line(a!)}\n${line(b!)}`);
  console.log(
    `A ÷ B: p50 ${ms(a!.wallMs.p50 / b!.wallMs.p50)}, CPU per run ${ms(a!.cpuPerRunMs / b!.cpuPerRunMs)}, ` +
      `runs/s ${ms(a!.runsPerSecond / b!.runsPerSecond)}`,
  );
  console.log(JSON.stringify({ agent, client, clients, sides: [a, b] }));
}
