/** The process id inside a runner id (`<host>-<pid>-<random>`): the process to SIGKILL. */
export function runnerPid(runnerId: string): number {
  const m = /-(\d+)-[a-z0-9]+$/.exec(runnerId);
  if (!m) throw new Error(`not a runner id: ${runnerId}`);
  return Number(m[1]);
}
