import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CheckedConfig, uncheckedConfig } from './checked-config.js';

const SCRIPT = fileURLToPath(new URL('./check-config.ts', import.meta.url));
/** Longer than any sane import of the tools modules; past it the check is a problem itself. */
export const CHECK_TIMEOUT_MS = 120_000;

/**
 * Runs check-config.ts in a child process with `env` and resolves with what it found. A check
 * that crashes or outlasts `timeoutMs` resolves with that as its problem (the child is killed).
 */
export function checkConfigApart(
  env: NodeJS.ProcessEnv,
  cwd: string,
  timeoutMs = CHECK_TIMEOUT_MS,
): Promise<CheckedConfig> {
  const file = path.resolve(cwd, env.MESH_CONFIG || './mesh.yaml');
  const failed = (why: string) => uncheckedConfig(file, why);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT], {
      cwd,
      env,
      stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 8192) stderr += d.toString();
    });
    let answer: CheckedConfig | undefined;
    child.on('message', (m) => {
      answer = m as CheckedConfig;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    // npm start may exit meanwhile (a signal): the check does not outlive it.
    const orphaned = () => child.kill('SIGKILL');
    process.once('exit', orphaned);
    child.once('exit', () => process.off('exit', orphaned));
    child.once('error', (e) => {
      clearTimeout(timer);
      resolve(failed(`${file}: the config could not be checked: ${e.message}`));
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (answer) return resolve(answer);
      const why =
        signal === 'SIGKILL'
          ? `took longer than ${timeoutMs / 1000} s`
          : `ended (${signal ?? `exit code ${code}`})`;
      resolve(failed(`${file}: checking the config ${why}${stderr ? `: ${stderr.trim()}` : ''}`));
    });
  });
}
