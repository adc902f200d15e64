import fs from 'node:fs';
import path from 'node:path';
import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { rssMb } from '../support/rss-mb.js';
import { type ServiceMode, spawnService } from '../support/spawn-service.js';
import { spread } from '../support/spread.js';

const READY = { gateway: 'gateway ready', runner: 'runner ready', 'tool-host': 'tool-host ready' } as const;
type Kind = keyof typeof READY;

/**
 * Start-up of each service, compiled (production) against its sources through tsx: time from
 * spawn to its "ready" log line, and its RSS then. Each start joins the bench's mesh on fresh
 * ports and is killed once measured.
 */
export async function startupFigures(ctx: BenchContext): Promise<Figure[]> {
  const reps = ctx.opts.quick ? 2 : 5;
  const figures: Figure[] = [];
  for (const kind of ['gateway', 'runner', 'tool-host'] as const) {
    const [dist, tsx] = [await measure(ctx, kind, 'dist', reps), await measure(ctx, kind, 'tsx', reps)];
    // The compiled service is the figure; its sources under tsx (what tests run) are the context.
    figures.push(
      figure(`startup_${kind}`, 'ms', spread(dist.ms), { extra: { tsx: spread(tsx.ms).p50 } }),
      figure(`startup_rss_${kind}`, 'MiB', spread(dist.rss), { extra: { tsx: spread(tsx.rss).p50 } }),
    );
  }
  return figures;
}

async function measure(ctx: BenchContext, kind: Kind, mode: ServiceMode, reps: number) {
  const ms: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < reps; i++) {
    const log = path.join(ctx.mesh.logDir, `startup-${kind}-${mode}-${i}.log`);
    const t0 = performance.now();
    const service = spawnService(
      kind,
      { ...ctx.mesh.env, LOG_LEVEL: 'info', LOG_FORMAT: 'json', GATEWAY_PORT: '0', TOOL_HOST_PORT: '0' },
      log,
      mode,
    );
    try {
      await readyLine(log, READY[kind], () => service.proc.exitCode);
      ms.push(performance.now() - t0);
      rss.push(rssMb(service.pid));
    } finally {
      await service.stop(0);
    }
  }
  return { ms, rss };
}

/** Polls `log` every 5 ms (start-up takes a few hundred) until it holds `line`; fails after 60 s. */
async function readyLine(log: string, line: string, exitCode: () => number | null): Promise<void> {
  const until = Date.now() + 60_000;
  const text = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '');
  while (!text().includes(line)) {
    if (Date.now() > until || exitCode() !== null) throw new Error(`no "${line}" in ${log}:\n${text()}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
