// Where one run's time goes, hop by hop (docs/architecture/where-the-time-goes.md, "Where a single
// run's time goes"): the mesh as `npm run bench` starts it (its own Redis, tool-host, gateway and 2
// runners, the shipped defaults, the fake model in its own process at latency 0), every process
// with bench/support/hop-trace.mjs loaded, which notes each HTTP request served and made and each
// Redis command sent and answered, from Node's diagnostics channels, between two signals. No
// MONITOR: Redis runs as it always does.
//
//   npm run -s build && npx tsx bench/hops.ts
//
// BENCH_HOP_AGENTS (comma list, default single,parent; `bare`, `bare-parent` and `bare-fan` are the same
// hops with none of the mesh's work, bench/support/bare-pipeline.ts), BENCH_RUNS sequential runs per agent (2000),
// BENCH_WARMUP runs first (3000, 10 at a time, the agents mixed as `npm run bench` warms up),
// BENCH_HOP_RUNNERS (2), BENCH_HOP_BARE_RUNNERS (the bare pipeline's, 1), BENCH_HOP_CLIENT (undici
// or fetch), BENCH_HOP_LATENCY (the model's ms, 0 by default; the warm-up runs at 0). Prints per
// agent its wall time untraced and traced, the CPU per run of each process (untraced), and the
// median timeline of the traced runs.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startBarePipeline } from './support/bare-pipeline.js';
import { type ClientName, meshClient } from './support/mesh-client.js';
import { startBenchModel } from './support/start-bench-model.js';
import { startMeshProcesses } from './support/start-mesh-processes.js';
import { stopOnExit } from './support/stop-on-exit.js';
import { bareProcesses, type HopReport, meshProcesses, traceHops } from './support/trace-hops.js';

const env = process.env;
const agents = (env.BENCH_HOP_AGENTS || 'single,parent').split(',').map((a) => a.trim());
const runs = Number(env.BENCH_RUNS || 2000);
const warmup = Number(env.BENCH_WARMUP || 3000);
const client = (env.BENCH_HOP_CLIENT || 'undici') as ClientName;
const latency = Number(env.BENCH_HOP_LATENCY || 0);
const note = (text: string) => process.stderr.write(`hops: ${text}\n`);

// Set before anything starts: every process the mesh is made of loads the tracer and knows where to write.
env.HOP_TRACE_DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-hops-'));
env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --import ${path.resolve(import.meta.dirname, 'support/hop-trace.mjs')}`;
process.on('SIGINT', () => void stopOnExit.run().finally(() => process.exit(130)));
try {
  const model = await startBenchModel(1);
  const mesh = await startMeshProcesses(model.url, 1, Number(env.BENCH_HOP_RUNNERS || 2));
  const invoke = meshClient(mesh.gatewayUrl, client);
  note(`warming up: ${warmup} runs`);
  const bareAgents = { bare: 'single', 'bare-parent': 'parent', 'bare-fan': 'fan' } as const;
  const isBare = (a: string): a is keyof typeof bareAgents => Object.hasOwn(bareAgents, a);
  const meshAgents = agents.filter((a) => !isBare(a));
  const mixed = ['single', 'parent', 'parent', ...meshAgents];
  await Promise.all(
    Array.from({ length: 10 }, async (_, c) => {
      for (let i = c; i < warmup; i += 10) await invoke(mixed[i % mixed.length]!);
    }),
  );
  await model.setLatency(latency);
  for (const agent of agents) {
    note(`${agent}: ${runs} runs untraced, then ${runs} traced`);
    if (!isBare(agent)) {
      print(await traceHops(meshProcesses(mesh, model.pid), () => invoke(agent), agent, runs));
      continue;
    }
    // The same hops with none of the mesh's work (bare-pipeline.ts), on the same Redis and model.
    const bare = await startBarePipeline(mesh.redisUrl, model.url, {
      runners: Number(env.BENCH_HOP_BARE_RUNNERS || 1),
    });
    const run = () => bare.invoke(bareAgents[agent]);
    await model.setLatency(0); // its warm-up at latency 0 too, as the mesh's
    for (let i = 0; i < warmup; i++) await run();
    await model.setLatency(latency);
    print(await traceHops(bareProcesses(bare, model.pid, mesh.redisPid), run, agent, runs));
    await bare.stop();
  }
} finally {
  await stopOnExit.run();
}

function print(r: HopReport): void {
  const ms = (x: number) => x.toFixed(3);
  console.log(`\n## ${r.agent} (client: ${client}, model latency ${latency} ms)\n`);
  console.log(
    `wall p50 ${ms(r.wallMs.p50)} ms (p10–p90 ${ms(r.wallMs.p10)}–${ms(r.wallMs.p90)}); ` +
      `traced ${ms(r.tracedWallMs.p50)} ms`,
  );
  console.log(
    `CPU per run (ms): ${Object.entries(r.cpuPerRunMs)
      .map(([role, v]) => `${role} ${ms(v)}`)
      .join(', ')}\n`,
  );
  console.log('| at ms | + ms | process | event |');
  console.log('| ---: | ---: | --- | --- |');
  for (const s of r.steps)
    console.log(
      `| ${ms(s.atMs)} | ${ms(s.gapMs)} | ${s.role} | ${s.event}${s.nth > 0 ? ` (#${s.nth + 1})` : ''} |`,
    );
  console.log(JSON.stringify(r));
}
