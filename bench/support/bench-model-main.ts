// The fake model as its own process, so neither the SDK's CPU nor the mesh's counts it. The parent
// sets the latency over IPC (`{latencyMs}` → `{ok}`), and may have it note when each request
// arrives and how long its reply took to send (`{trace: true}` → `{ok}`, `{peek: true}` →
// `{arrivals}` so far, then `{trace: false}` → `{arrivals}`); the process ends when the parent goes away.
import { type SeenRequest, startFakeModel, turnOf } from '@agentmesh/test-support/fake-model';
import { benchScript } from './bench-script.js';
import { type Arrival, monotonicMs } from './model-arrivals.js';

let latencyMs = 0;
let arrivals: { arrival: Arrival; seen: SeenRequest }[] | undefined;
const depth = Number(process.env.BENCH_DEPTH ?? 20);
const script = benchScript(() => latencyMs, depth);
const model = await startFakeModel((r) => {
  model.requests.length = 0; // the bench sends many thousands; keep none
  arrivals?.push({
    arrival: { agent: r.agent, turn: turnOf(r), at: monotonicMs(), stream: r.stream },
    seen: r,
  });
  return script(r);
});
// What was noted so far; a reply's doneAt is set when its last piece is written (fake-model.ts).
const noted = (): Arrival[] =>
  (arrivals ?? []).map(({ arrival, seen }) =>
    seen.doneAt === undefined ? arrival : { ...arrival, sentMs: seen.doneAt - seen.arrivedAt },
  );
process.on('message', (m: { latencyMs: number } | { trace: boolean } | { peek: true }) => {
  if ('peek' in m) {
    process.send!({ arrivals: noted() });
    return;
  }
  if ('trace' in m) {
    process.send!(m.trace ? { ok: true } : { arrivals: noted() });
    arrivals = m.trace ? [] : undefined;
    return;
  }
  latencyMs = m.latencyMs;
  process.send!({ ok: true });
});
process.on('disconnect', () => void model.close().finally(() => process.exit(0)));
process.send!({ url: model.url });
