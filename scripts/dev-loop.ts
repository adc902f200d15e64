import path from 'node:path';
import type { CheckedConfig, FileRole } from './checked-config.js';
import { LEVELS } from './mesh-output.js';
import { type Part, planRestarts } from './plan-restarts.js';
import { watchFiles } from './watch-files.js';

const ORDER: Part[] = ['tool-host', 'runners', 'gateway'];

/** What the dev loop needs of npm start. */
export interface DevLoopOptions {
  /** The config the services were started with (checked, no problems). */
  config: CheckedConfig;
  /** Checks the config as it is now (check-config-apart.ts). */
  check(): Promise<CheckedConfig>;
  say(text: string, level?: number): void;
  /** Says a heading (ending with `:`) and the problems under it. */
  sayProblems(heading: string, problems: string[]): void;
  /** Which parts are running now (one that exited is restarted by the next change). */
  running(): Record<Part, boolean>;
  /** Restarts these parts in this order; resolves true once the gateway is ready again. */
  restart(parts: Part[]): Promise<boolean>;
  /** The config the services now run. */
  onChecked(config: CheckedConfig): void;
}

/**
 * `npm run dev` (docs/guides/getting-started.md): watches the config and every local file its tools modules and code
 * agents import; on a change says what it saw, checks the config again, and either lists the new
 * config's problems (the services keep running the last good one) or restarts the parts the
 * change affects (plan-restarts.ts). Redis and the demo model are never restarted. Changes seen
 * while a restart runs are handled after it, together.
 */
export function startDevLoop(o: DevLoopOptions): { close(): void } {
  let running = o.config;
  let latest = o.config;
  const roles = new Set<FileRole>(); // of the changes not applied yet (a broken config waits for a fix)
  let busy = false;
  let queued: string[] = [];
  const watch = watchFiles((files) => void onChange(files));
  const follow = () =>
    watch.set([...new Set([...Object.keys(running.watched), ...Object.keys(latest.watched)])]);
  follow();

  // A file by its path from the config's directory, or in full when it lies elsewhere.
  const shown = (file: string) => {
    const relative = path.relative(path.dirname(running.roots.config), file);
    return relative.startsWith('..') || path.isAbsolute(relative) ? file : relative;
  };

  async function onChange(files: string[]): Promise<void> {
    if (busy) {
      queued.push(...files);
      return;
    }
    busy = true;
    try {
      const seen = files.map((f) => {
        const of = [...new Set([...(running.watched[f] ?? []), ...(latest.watched[f] ?? [])])];
        for (const role of of) roles.add(role);
        return `${shown(f)} (${of.join(', ') || 'unknown'})`;
      });
      o.say(`saw a change: ${seen.join(', ')}; checking the config`);
      latest = await o.check();
      follow();
      if (latest.problems.length > 0) {
        const n = latest.problems.length;
        o.sayProblems(
          `the new config has ${n} problem${n === 1 ? '' : 's'}; the services keep running the last good one:`,
          latest.problems,
        );
        return;
      }
      const alive = o.running();
      const planned = new Set(planRestarts(roles, running, latest));
      for (const part of ORDER) if (!alive[part]) planned.add(part);
      const parts = ORDER.filter((p) => planned.has(p));
      roles.clear();
      running = latest;
      o.onChecked(latest);
      follow();
      if (parts.length === 0) {
        o.say('the config is fine and nothing it runs changed: no restart');
        return;
      }
      o.say(`restarting ${parts.join(', ')} (Redis and the model keep running)`);
      const began = Date.now();
      const ready = await o.restart(parts);
      const took = ((Date.now() - began) / 1000).toFixed(1);
      if (ready) o.say(`restarted ${parts.join(', ')} in ${took} s: ready`);
      else
        o.say(`restarted ${parts.join(', ')}, but the mesh is not ready: see the lines above`, LEVELS.error);
    } finally {
      busy = false;
      if (queued.length > 0) {
        const next = queued;
        queued = [];
        void onChange(next);
      }
    }
  }
  return { close: () => watch.close() };
}
