import os from 'node:os';

/** The machine a run measured, written next to its figures. */
export interface MachineInfo {
  host: string;
  cpu: string;
  cores: number;
  memoryGiB: number;
  node: string;
  redis: string;
  /** 1-minute load average when the run started and ended: a busy machine makes every figure noisy. */
  loadStart: number;
  loadEnd?: number;
}

/** Describes this machine (named by `BENCH_MACHINE`, else its short host name); Redis's version from INFO. */
export function machineInfo(redisVersion: string): MachineInfo {
  return {
    host: process.env.BENCH_MACHINE || os.hostname().split('.')[0]!,
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    redis: redisVersion,
    loadStart: os.loadavg()[0]!,
  };
}
