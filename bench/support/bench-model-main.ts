// The fake model as its own process, so neither the SDK's CPU nor the mesh's counts it. The parent
// sets the latency over IPC (`{latencyMs}` → `{ok}`); the process ends when the parent goes away.
import { startFakeModel } from '@agentmesh/test-support/fake-model';
import { benchScript } from './bench-script.js';

let latencyMs = 0;
const depth = Number(process.env.BENCH_DEPTH ?? 20);
const script = benchScript(() => latencyMs, depth);
const model = await startFakeModel((r) => {
  model.requests.length = 0; // the bench sends many thousands; keep none
  return script(r);
});
process.on('message', (m: { latencyMs: number }) => {
  latencyMs = m.latencyMs;
  process.send!({ ok: true });
});
process.on('disconnect', () => void model.close().finally(() => process.exit(0)));
process.send!({ url: model.url });
