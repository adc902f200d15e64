import { fork } from 'node:child_process';
import type { Arrival } from './model-arrivals.js';
import { stopOnExit } from './stop-on-exit.js';

/** The fake model process: its URL, its pid (for nothing but cleanup), its latency knob and its log of arrivals. */
export interface BenchModel {
  url: string;
  pid: number;
  setLatency(ms: number): Promise<void>;
  /** Notes when each request arrives from now on (see model-arrivals.ts). */
  startTrace(): Promise<void>;
  /** The requests that arrived since startTrace, in order; goes on noting. */
  peekTrace(): Promise<Arrival[]>;
  /** The requests that arrived since startTrace, in order; stops noting. */
  stopTrace(): Promise<Arrival[]>;
}

/** Forks the fake model server (bench-model-main.ts) and waits for its URL. */
export async function startBenchModel(depth: number): Promise<BenchModel> {
  const child = fork(new URL('./bench-model-main.ts', import.meta.url), {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, BENCH_DEPTH: String(depth) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  stopOnExit.track(child.pid!);
  stopOnExit.add(() => {
    child.kill('SIGKILL');
    stopOnExit.untrack(child.pid!);
  });
  // Replies come in order: each waiter takes the next message; an exit fails them all.
  const waiters: { resolve: (m: any) => void; reject: (e: Error) => void }[] = [];
  child.on('message', (m) => waiters.shift()?.resolve(m));
  child.on('exit', (code) => {
    for (const w of waiters.splice(0)) w.reject(new Error(`the fake model exited (${code})`));
  });
  const next = () => new Promise<any>((resolve, reject) => waiters.push({ resolve, reject }));
  const { url } = (await next()) as { url: string };
  return {
    url,
    pid: child.pid!,
    setLatency: async (ms) => {
      const ack = next();
      child.send({ latencyMs: ms });
      await ack;
    },
    startTrace: async () => {
      const ack = next();
      child.send({ trace: true });
      await ack;
    },
    peekTrace: async () => {
      const reply = next();
      child.send({ peek: true });
      return ((await reply) as { arrivals: Arrival[] }).arrivals;
    },
    stopTrace: async () => {
      const reply = next();
      child.send({ trace: false });
      return ((await reply) as { arrivals: Arrival[] }).arrivals;
    },
  };
}
