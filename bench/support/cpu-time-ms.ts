import fs from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on every Linux the bench runs on). */
const TICK_MS = 10;

/** CPU time (user + system, all threads) a process has used so far, in ms, from /proc/<pid>/stat. */
export function cpuTimeMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may hold spaces): utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

/** The CPU time `pids` have used so far together, in ms (cpuTimeMs of each). */
export function cpuTimeOfMs(pids: readonly number[]): number {
  return pids.reduce((ms, pid) => ms + cpuTimeMs(pid), 0);
}
