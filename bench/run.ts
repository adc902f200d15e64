// `npm run bench`: the mesh (gateway, two runners, tool-host, Redis as separate processes) against
// the in-process OpenAI Agents SDK on the same fake OpenAI-compatible model, side by side. Prints
// one JSON line per figure: medians over repeated runs with their spread (DESIGN §11).
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeModel, turnOf } from '../test/support/fake-model.js';
import { freePort, startRedis } from '../test/support/redis-server.js';
import { sdkBaseline } from './sdk-baseline.js';

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
let latencyMs = 0;
const model = await startFakeModel((r) => {
  if (r.agent === 'child') return { final: 'child answer', latencyMs };
  if (r.agent === 'single' || turnOf(r) > 0) return { final: 'done', latencyMs };
  const n = r.agent === 'fan' ? 8 : 1;
  return {
    calls: Array.from({ length: n }, (_, i) => ({ name: '_subagent_child', args: { input: `part ${i}` } })),
    latencyMs,
  };
});
const redis = await startRedis();
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-bench-'));
const [gatewayPort, toolHostPort] = [await freePort(), await freePort()];
const config = path.join(dir, 'mesh.yaml');
// The SDK's asTool() takes {input: string}; the mesh's children are declared the same way.
fs.writeFileSync(
  config,
  `models:\n  default: {provider: openai, baseUrl: '${model.url}', apiKey: bench, model: fake}\ntools: []\nagents:
  single: {instructions: "@agent single"}
  parent: {instructions: "@agent parent", subagents: [child]}
  fan: {instructions: "@agent fan", subagents: [child]}
  child: {instructions: "@agent child", input: {type: object, properties: {input: {type: string}}, required: [input]}}\n`,
);
const env = {
  ...process.env,
  MESH_CONFIG: config,
  REDIS_URL: redis.url,
  GATEWAY_PORT: String(gatewayPort),
  TOOL_HOST_PORT: String(toolHostPort),
  TOOL_HOST_URL: `http://127.0.0.1:${toolHostPort}`,
  LOG_LEVEL: 'warn',
};
const procs: ChildProcess[] = [];
const start = (script: string, extra: Record<string, string> = {}) =>
  procs.push(
    spawn('npm', ['run', '-s', script], { env: { ...env, ...extra }, stdio: 'ignore', detached: true }),
  );
const stop = async () => {
  for (const p of procs) {
    try {
      process.kill(-p.pid!, 'SIGKILL');
    } catch {}
  }
  await redis.stop();
  await model.close();
};
process.on('SIGINT', () => void stop().then(() => process.exit(130)));

try {
  start('tool-host');
  start('runner');
  start('runner');
  start('gateway');
  const gw = `http://127.0.0.1:${gatewayPort}`;
  for (const until = Date.now() + 120_000; ; ) {
    if ((await fetch(`${gw}/readyz`).catch(() => undefined))?.status === 200) break;
    if (Date.now() > until) throw new Error('the mesh did not get ready');
    await new Promise((r) => setTimeout(r, 250));
  }
  const mesh = async (agent: string) => {
    const body = agent === 'child' ? { input: 'x' } : { prompt: 'go' };
    const res = await fetch(`${gw}/agents/${agent}/invoke?wait=60`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const view = (await res.json()) as { status: string };
    if (view.status !== 'succeeded') throw new Error(`${agent}: ${JSON.stringify(view)}`);
  };
  const sdk = sdkBaseline(model.url);
  const time = async (fn: () => Promise<void>, runs: number) => {
    for (let i = 0; i < 3; i++) await fn(); // warm-up
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await fn();
      ms.push(performance.now() - t0);
    }
    return ms.sort((a, b) => a - b);
  };
  const median = (xs: number[]) => xs[Math.floor(xs.length / 2)]!;
  const spread = (xs: number[]) => ({
    p10: round(xs[Math.floor(xs.length * 0.1)]!),
    p90: round(xs[Math.floor(xs.length * 0.9)]!),
  });
  const round = (x: number) => Math.round(x * 100) / 100;
  const report = (figure: string, extra: Record<string, unknown>) =>
    console.log(JSON.stringify({ figure, ...extra }));

  latencyMs = 0;
  const [meshSingle, meshParent] = [
    await time(() => mesh('single'), RUNS),
    await time(() => mesh('parent'), RUNS),
  ];
  const [sdkSingle, sdkParent] = [
    await time(() => sdk('single'), RUNS),
    await time(() => sdk('parent'), RUNS),
  ];
  const meshOverhead = median(meshParent) - median(meshSingle);
  const sdkOverhead = median(sdkParent) - median(sdkSingle);
  report('delegation_overhead_p50_ms', {
    latencyMs,
    runs: RUNS,
    mesh: round(meshOverhead),
    sdk: round(sdkOverhead),
    ratio: round(meshOverhead / sdkOverhead),
    mesh_single: spread(meshSingle),
    mesh_parent: spread(meshParent),
    sdk_single: spread(sdkSingle),
    sdk_parent: spread(sdkParent),
  });

  latencyMs = 50;
  const runs = Math.max(5, Math.floor(RUNS / 3));
  const [meshFan, sdkFan] = [await time(() => mesh('fan'), runs), await time(() => sdk('fan'), runs)];
  report('overlap_8_siblings_wall_p50_ms', {
    latencyMs,
    runs,
    ideal: 3 * latencyMs,
    mesh: round(median(meshFan)),
    sdk: round(median(sdkFan)),
    ratio_to_sdk: round(median(meshFan) / median(sdkFan)),
    ratio_to_ideal: round(median(meshFan) / (3 * latencyMs)),
    mesh_spread: spread(meshFan),
    sdk_spread: spread(sdkFan),
  });
} finally {
  await stop();
}
