import { type ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { LEVELS, lineWriter, type MeshOutput } from './mesh-output.js';

/** How a child process ended. */
export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A child process of `npm start`, its output prefixed with its name. */
export interface Service {
  name: string;
  child: ChildProcess;
  /** Settles when the process has exited (also when it never started: code null, signal null). */
  exited: Promise<ExitStatus>;
  readonly running: boolean;
  /** Sends a signal if the process still runs. */
  signal(signal: NodeJS.Signals): void;
  /** SIGTERM, then SIGKILL if it is still running after `graceMs`; settles once it has exited. */
  stop(graceMs: number): Promise<ExitStatus>;
}

/** Every child started here that has not exited yet: what a last-resort cleanup must kill. */
export const liveServices = new Set<Service>();

/**
 * Starts a child process whose stdout/stderr lines reach ours as `name | line` (or JSON lines, see
 * lineWriter). A `detached` one has its own process group, so a Ctrl-C at the terminal reaches it
 * only through us.
 */
export function spawnService(
  name: string,
  command: string,
  args: string[],
  options: {
    env: NodeJS.ProcessEnv;
    cwd: string;
    output: MeshOutput;
    detached?: boolean;
    /** Sees each line of its stdout after it was written. */
    onLine?: (line: string) => void;
  },
): Service {
  const child = spawn(command, args, {
    env: options.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached === true,
  });
  const out = lineWriter(options.output, name, process.stdout);
  const err = lineWriter(options.output, name, process.stderr);
  pipeLines(child.stdout, (line) => {
    out(line);
    options.onLine?.(line);
  });
  pipeLines(child.stderr, (line) => err(line, LEVELS.warn));
  let running = true;
  const exited = new Promise<ExitStatus>((resolve) => {
    const end = (status: ExitStatus) => {
      running = false;
      liveServices.delete(service);
      resolve(status);
    };
    child.once('exit', (code, signal) => end({ code, signal }));
    child.once('error', (e) => {
      err(`could not start ${command}: ${e.message}`, LEVELS.error);
      if (child.pid === undefined) end({ code: null, signal: null });
    });
  });
  const signal = (sig: NodeJS.Signals) => {
    if (!running) return;
    try {
      child.kill(sig);
    } catch {
      // already gone
    }
  };
  const service: Service = {
    name,
    child,
    exited,
    get running() {
      return running;
    },
    signal,
    stop: async (graceMs) => {
      signal('SIGTERM');
      const timer = setTimeout(() => signal('SIGKILL'), graceMs);
      const status = await exited;
      clearTimeout(timer);
      return status;
    },
  };
  liveServices.add(service);
  return service;
}

function pipeLines(from: NodeJS.ReadableStream | null, write: (line: string) => void): void {
  if (!from) return;
  createInterface({ input: from, crlfDelay: Number.POSITIVE_INFINITY }).on('line', write);
}
