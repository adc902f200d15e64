import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';

/**
 * Spawns `command` without tap's process tracker. tap loads `@tapjs/processinfo` into every node
 * process a test starts (its module hook, in NODE_OPTIONS, put back at every spawn): about a second
 * of CPU on each service's start, on 2 cores a large share of the tiers that start services by the
 * hundred. A service needs neither the tracking nor coverage (withoutCoverage, npm-start.ts), so
 * the command runs through `sh`, which sets NODE_OPTIONS back to what the caller gave it, less the
 * tracker, before it becomes the command (`exec`: the same pid and process group). Without the
 * tracker in NODE_OPTIONS (outside tap), a plain spawn.
 */
export function spawnUntracked(
  command: string,
  args: readonly string[],
  options: SpawnOptions & { env: NodeJS.ProcessEnv },
): ChildProcess {
  const { NODE_OPTIONS: given, ...env } = options.env;
  const kept = withoutTracker(given);
  // Outside tap (the bench), or with the tracker gone already: spawned as it is.
  if (kept === (given ?? '').trim()) return spawn(command, args, options);
  const script =
    'if [ -n "$MESH_NODE_OPTIONS" ]; then export NODE_OPTIONS="$MESH_NODE_OPTIONS"; else unset NODE_OPTIONS; fi; unset MESH_NODE_OPTIONS; exec "$@"';
  return spawn('/bin/sh', ['-c', script, 'sh', command, ...args], {
    ...options,
    env: { ...env, MESH_NODE_OPTIONS: kept },
  });
}

/** NODE_OPTIONS without tap's process tracker (its `--import`/`--loader` of @tapjs/processinfo). */
export function withoutTracker(nodeOptions: string | undefined): string {
  return (nodeOptions ?? '')
    .split(/\s+/)
    .filter((a) => a !== '' && !a.includes('@tapjs/processinfo'))
    .join(' ');
}
