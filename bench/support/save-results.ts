import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_RUNNER_CONCURRENCY } from '@agentmesh/shared';
import type { BenchOptions } from './bench-options.js';
import type { Figure } from './figure.js';
import type { MachineInfo } from './machine-info.js';

/** What a run produced: its figures, the groups that failed, the table, where and how big. */
export interface BenchResults {
  figures: Figure[];
  errors: { figure: string; error: string }[];
  table: string;
  machine: MachineInfo;
  opts: BenchOptions;
}

/**
 * Writes bench/results/<date>-<machine>.json (everything) and .md (machine, sizes, table); a second
 * run that day on that machine is <date>T<hhmm>-<machine>, so no run overwrites another. Returns the paths.
 */
export function saveResults({ figures, errors, table, machine, opts }: BenchResults): string[] {
  const dir = path.resolve(import.meta.dirname, '../results');
  fs.mkdirSync(dir, { recursive: true });
  const date = new Date().toISOString();
  const mode = opts.queueFastPath === 'off' ? '-fastpath-off' : '';
  const named = (stamp: string) => path.join(dir, `${stamp}-${machine.host}${mode}`);
  const base = fs.existsSync(`${named(date.slice(0, 10))}.json`)
    ? named(date.slice(0, 16).replace(':', ''))
    : named(date.slice(0, 10));
  fs.writeFileSync(
    `${base}.json`,
    `${JSON.stringify({ date, machine, options: opts, figures, errors }, null, 2)}\n`,
  );
  const about = [
    `# npm run bench, ${date}`,
    '',
    `Machine: ${machine.host}, ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}, Redis ${machine.redis}; load average ${machine.loadStart.toFixed(2)} at start, ${machine.loadEnd?.toFixed(2)} at end.`,
    `Queue fast path: ${opts.queueFastPath} (MESH_QUEUE_FASTPATH). Sizes: ${opts.reps} repetitions, ${opts.runs} runs per latency repetition, ${opts.seconds} s per throughput window, warm-up ${opts.warmup} runs, runners ${opts.runnerCounts.join('/')} of ${DEFAULT_RUNNER_CONCURRENCY} slots each (the shipped defaults), ${opts.parked} parked, ${opts.recoveries} recoveries, depth ${opts.depth}.`,
    '',
    table,
    '',
    ...errors.map((e) => `Failed: ${e.figure}: ${e.error}`),
  ];
  fs.writeFileSync(`${base}.md`, about.join('\n'));
  return [`${base}.json`, `${base}.md`];
}
