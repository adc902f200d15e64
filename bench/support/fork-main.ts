import { type ChildProcess, fork } from 'node:child_process';
import { stopOnExit } from './stop-on-exit.js';

/**
 * Forks a bench helper process (`file`, a `*-main.ts` run through tsx) with `env` added to this
 * process's environment, tracked for the bench's exit, and waits for its first message: its
 * readiness, and what it tells (a URL). Rejects if it exits first.
 */
export async function forkMain(
  file: URL,
  env: Record<string, string>,
): Promise<{ child: ChildProcess; first: unknown }> {
  const child = fork(file, {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  stopOnExit.track(child.pid!);
  const first = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`${file.pathname} exited (${code})`)));
  });
  return { child, first };
}
