import { type BarePipeline, startBarePipeline } from '../support/bare-pipeline.js';
import type { BenchContext } from '../support/bench-context.js';
import { closedLoop, type LoadResult } from '../support/closed-loop.js';
import { cpuTimeOfMs } from '../support/cpu-time-ms.js';
import { type Figure, figure } from '../support/figure.js';
import { percentile } from '../support/percentile.js';
import { rotate } from '../support/rotate.js';
import { round, spread } from '../support/spread.js';

/** A closed load's targets: the docs/performance.md row it measures. */
export interface LoadTargets {
  /** The least runs/s ratio to the SDK that meets the target. */
  minRatio: number;
  target: string;
}

const DEFAULT_TARGETS: LoadTargets = { minRatio: 1, target: '≥ 1.0 × SDK' };

/** The bare runners under a load's floor: as many as the mesh ships. */
const FLOOR_RUNNERS = 2;

/**
 * Parent + 1 delegation runs/s with `clients` closed-loop clients at `latencyMs`, for each client
 * of the mesh against the SDK measured once per repetition, and what each run costs:
 * - `cpu_per_run`: every mesh process and Redis (/proc) against the SDK's own process (cpuUsage);
 * - `cpu_per_run_all`: every process either side needs — the mesh's, its caller's (this process,
 *   whose clients are all it runs during the mesh's window) and the fake model's against the SDK's
 *   process and the fake model's;
 * - `latency_p99`: the 99th percentile of a run's wall time, per repetition.
 * The clients take turns, in another order each repetition, so the machine's drift reaches both.
 * With `floor`, the same load on the same hops with none of the mesh's work (bare-pipeline.ts, two
 * bare runners) takes its turn too, through each client: `floor_bare_throughput_*` and
 * `floor_bare_cpu_per_run_*`, the bare processes and Redis against the SDK's process, the part of
 * each ratio the hops alone take.
 */
export async function throughputFigures(
  ctx: BenchContext,
  latencyMs: number,
  clients: number,
  targets: LoadTargets = DEFAULT_TARGETS,
  { floor = false }: { floor?: boolean } = {},
): Promise<Figure[]> {
  const bare = floor
    ? await startBarePipeline(ctx.mesh.redisUrl, ctx.model.url, {
        runners: FLOOR_RUNNERS,
        prefix: 'bench-bare-load',
      })
    : undefined;
  try {
    return await measureLoad(ctx, latencyMs, clients, targets, bare);
  } finally {
    await bare?.stop();
  }
}

async function measureLoad(
  ctx: BenchContext,
  latencyMs: number,
  clients: number,
  targets: LoadTargets,
  bare: BarePipeline | undefined,
): Promise<Figure[]> {
  await ctx.model.setLatency(latencyMs);
  const meshCpu = {
    mesh: ctx.meshCpuMs,
    all: () => ctx.meshCpuMs() + ctx.sdkCpuMs() + ctx.modelCpuMs(),
  };
  const sdkCpu = { mesh: ctx.sdkCpuMs, all: () => ctx.sdkCpuMs() + ctx.modelCpuMs() };
  const series = () => ({
    rate: [] as number[],
    cpu: [] as number[],
    cpuAll: [] as number[],
    p99: [] as number[],
  });
  const sdk = series();
  const mesh = new Map(ctx.clients.map((c) => [c.name, { ...series(), runs: 0, parts: zeroParts() }]));
  const floor = new Map(
    ctx.clients.map((c) => [c.name, { ...series(), parts: [] as Record<string, number>[] }]),
  );
  const cpuOf = (pids: number[]) => () => cpuTimeOfMs(pids);
  const bareCpu = bare && {
    mesh: cpuOf([ctx.mesh.redisPid, bare.gatewayPid, ...bare.runnerPids]),
    all: () => bareCpu!.mesh() + ctx.sdkCpuMs() + ctx.modelCpuMs(),
    redis: cpuOf([ctx.mesh.redisPid]),
    gateway: cpuOf([bare.gatewayPid]),
    runners: cpuOf(bare.runnerPids),
  };
  if (bare)
    for (let i = 0; i < ctx.opts.warmup; i++)
      await bare.invoke('parent', ctx.clients[i % ctx.clients.length]!.name);
  for (let rep = 0; rep < ctx.opts.reps; rep++) {
    for (const client of rotate(ctx.clients, rep)) {
      const m = mesh.get(client.name)!;
      const before = ctx.meshCpuByPart();
      const load = await closedLoop(() => client.invoke('parent'), clients, ctx.opts.seconds, meshCpu);
      const after = ctx.meshCpuByPart();
      for (const k of Object.keys(m.parts) as (keyof typeof m.parts)[]) m.parts[k] += after[k] - before[k];
      m.runs += load.runs;
      push(m, load);
    }
    push(sdk, await closedLoop(() => ctx.sdk('parent'), clients, ctx.opts.seconds, sdkCpu));
    if (bare)
      for (const { name: via } of rotate(ctx.clients, rep)) {
        const f = floor.get(via)!;
        const load = await closedLoop(() => bare.invoke('parent', via), clients, ctx.opts.seconds, bareCpu);
        const { redis, gateway, runners } = load.cpuMsPerRun;
        f.parts.push({ redis: redis!, gateway: gateway!, runners: runners! });
        push(f, load);
      }
    ctx.note(`throughput ${latencyMs} ms × ${clients}: repetition ${rep + 1}/${ctx.opts.reps}`);
  }
  const figures: Figure[] = bare
    ? [...floor].flatMap(([via, f]) =>
        floorFigures(f, sdk, { latencyMs, clients, client: via, seconds: ctx.opts.seconds }),
      )
    : [];
  for (const [client, m] of mesh) {
    const extra = {
      latencyMs,
      clients,
      client,
      runners: ctx.mesh.runners.length,
      seconds: ctx.opts.seconds,
    };
    figures.push(
      figure(`throughput_latency${latencyMs}_clients${clients}`, 'runs/s', spread(m.rate), {
        sdk: spread(sdk.rate),
        minRatio: targets.minRatio,
        target: targets.target,
        extra,
      }),
      figure(`cpu_per_run_latency${latencyMs}`, 'ms', spread(m.cpu), {
        sdk: spread(sdk.cpu),
        maxRatio: 1.5,
        target: '≤ 1.5 × SDK',
        extra: {
          ...extra,
          counted: 'gateway + runners + tool-host + redis-server vs the SDK process',
          meshByPart: Object.fromEntries(Object.entries(m.parts).map(([k, ms]) => [k, round(ms / m.runs)])),
        },
      }),
      figure(`cpu_per_run_all_latency${latencyMs}`, 'ms', spread(m.cpuAll), {
        sdk: spread(sdk.cpuAll),
        maxRatio: 1.5,
        target: '≤ 1.5 × SDK, every process either side needs',
        extra: {
          ...extra,
          counted: 'the mesh + its caller + the fake model vs the SDK process + the fake model',
        },
      }),
      figure(`latency_p99_latency${latencyMs}_clients${clients}`, 'ms', spread(m.p99), {
        sdk: spread(sdk.p99),
        target: "reported: a run's 99th percentile wall time, per repetition",
        extra,
      }),
    );
  }
  return figures;
}

type Series = { rate: number[]; cpu: number[]; cpuAll: number[]; p99: number[] };

function floorFigures(
  floor: Series & { parts: Record<string, number>[] },
  sdk: Series,
  load: { latencyMs: number; clients: number; client: string; seconds: number },
): Figure[] {
  const { latencyMs, clients } = load;
  const extra = { ...load, runners: FLOOR_RUNNERS };
  return [
    figure(`floor_bare_throughput_latency${latencyMs}_clients${clients}`, 'runs/s', spread(floor.rate), {
      sdk: spread(sdk.rate),
      target:
        "reported: the load's hops alone, parent + 1 delegation in stock BullMQ steps (docs/reference/benchmarks.md)",
      extra,
    }),
    figure(`floor_bare_cpu_per_run_latency${latencyMs}`, 'ms', spread(floor.cpu), {
      sdk: spread(sdk.cpu),
      target: 'reported: what the hops alone cost',
      extra: {
        ...extra,
        counted: 'the bare gateway + bare runners + redis-server vs the SDK process',
        // Each part's median of the repetitions (the mesh's figure gives its parts over all of them).
        bareByPart: Object.fromEntries(
          ['redis', 'gateway', 'runners'].map((k) => [k, spread(floor.parts.map((p) => p[k]!)).p50]),
        ),
      },
    }),
    figure(`floor_bare_cpu_per_run_all_latency${latencyMs}`, 'ms', spread(floor.cpuAll), {
      sdk: spread(sdk.cpuAll),
      target: 'reported: what the hops alone cost, every process either side needs',
      extra: {
        ...extra,
        counted: 'the bare pipeline + its caller + the fake model vs the SDK process + the fake model',
      },
    }),
  ];
}

function zeroParts() {
  return { redis: 0, gateway: 0, toolHost: 0, runners: 0 };
}

function push(s: Series, load: LoadResult): void {
  s.rate.push(load.runsPerSecond);
  s.cpu.push(load.cpuMsPerRun.mesh!);
  s.cpuAll.push(load.cpuMsPerRun.all!);
  s.p99.push(percentile(load.latenciesMs, 0.99));
}
