// Where Redis's time goes in a run (docs/architecture/where-the-time-goes.md, "Where Redis's time
// goes"): the mesh started as `npm run bench` starts it (its own Redis, tool-host, gateway and 2
// runners, the shipped defaults) against the fake model at latency 0, warmed up, then for each
// agent BENCH_RUNS sequential runs read on Redis's side: its CPU per run, its command time per run,
// and each command or script the services sent with Redis's time in it (SLOWLOG at BENCH_SLOWLOG_US
// µs, a threshold between a script's inner commands and a script). The Node processes' CPU profiles
// (BENCH_CPU_PROF) cannot see into Redis; this does.
//
//   npm run -s build && npx tsx bench/redis-time.ts
//   BENCH_REDIS_AGENTS=parent BENCH_RUNS=1000 npx tsx bench/redis-time.ts
import { Redis } from 'ioredis';
import { meshClient } from './support/mesh-client.js';
import { type RedisTime, redisTime } from './support/redis-time.js';
import { startBenchModel } from './support/start-bench-model.js';
import { startMeshProcesses } from './support/start-mesh-processes.js';
import { stopOnExit } from './support/stop-on-exit.js';

const env = process.env;
const agents = (env.BENCH_REDIS_AGENTS || 'single,parent').split(',').map((a) => a.trim());
const runs = Number(env.BENCH_RUNS || 500);
const warmup = Number(env.BENCH_WARMUP || 2000);
const slowUs = Number(env.BENCH_SLOWLOG_US || 15);
const note = (text: string) => process.stderr.write(`redis-time: ${text}\n`);

process.on('SIGINT', () => void stopOnExit.run().finally(() => process.exit(130)));
try {
  const model = await startBenchModel(1);
  const mesh = await startMeshProcesses(model.url, 1, 2, {});
  const invoke = meshClient(mesh.gatewayUrl);
  const redis = new Redis(mesh.redisUrl);
  stopOnExit.add(() => redis.disconnect());
  note(`warming up: ${warmup} runs`);
  await Promise.all(
    Array.from({ length: 10 }, async (_, c) => {
      for (let i = c; i < warmup; i += 10) await invoke(agents[i % agents.length]!);
    }),
  );
  for (const agent of agents) {
    note(`${agent}: ${runs} runs`);
    print(await redisTime(redis, invoke, agent, runs, slowUs));
  }
} finally {
  await stopOnExit.run();
}

function print(r: RedisTime): void {
  const listed = r.steps.reduce((sum, s) => sum + s.usPerRun, 0);
  console.log(
    `\n## ${r.agent}\n\nRedis CPU per run ${r.cpuPerRunMs.toFixed(3)} ms; executing commands ` +
      `${(r.commandsUsPerRun / 1000).toFixed(3)} ms, of which the steps below (≥ ${slowUs} µs each) ` +
      `${(listed / 1000).toFixed(3)} ms\n`,
  );
  console.log(
    '| µs per run | calls per run | µs per call | command or script |\n| ---: | ---: | ---: | --- |',
  );
  for (const s of r.steps.filter((s) => s.usPerRun >= 1))
    console.log(
      `| ${s.usPerRun.toFixed(1)} | ${s.callsPerRun.toFixed(2)} | ${s.usPerCall.toFixed(1)} | ${s.name} |`,
    );
  console.log(JSON.stringify(r));
}
