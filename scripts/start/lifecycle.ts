/**
 * How the mesh stops: `shutdown` drains the services against Redis, then stops the private Redis
 * and the demo model, then exits; Ctrl-C, SIGTERM or SIGHUP start it (a second signal a while later
 * kills every service at once), as does the end of the process that launched npm start; the build
 * child is signalled too, and on any exit no child outlives this process.
 */
import type { DemoModel } from '../../demo/model/demo-model.js';
import type { RedisHandle } from '../ensure-redis.js';
import { LEVELS } from '../mesh-output.js';
import { liveServices } from '../spawn-service.js';
import { watchLauncher } from '../watch-launcher.js';
import type { Say } from './say.js';

/** How long a service has to drain once asked to stop (ms). */
export const GRACE_MS = 15_000;

export class MeshLifecycle {
  /** What npm start runs besides its services, stopped after them. */
  redis: RedisHandle | undefined;
  model: DemoModel | undefined;
  /** The build npm start is running, if any. */
  buildPid: number | undefined;
  #stopping: Promise<void> | undefined;

  constructor(private readonly say: Say) {}

  /** Once the mesh is stopping: settles when it stopped (the process exits then). */
  get stopping(): Promise<void> | undefined {
    return this.#stopping;
  }

  /** Stops the services (they drain against Redis), then the private Redis and the demo model, then exits. */
  shutdown(code: number, reason: string): Promise<void> {
    this.#stopping ??= (async () => {
      this.say(reason, code === 0 ? LEVELS.info : LEVELS.error);
      this.signalBuild('SIGTERM');
      const services = [...liveServices].filter((s) => s !== this.redis?.service);
      await Promise.all(services.map((s) => s.stop(GRACE_MS)));
      await this.redis?.stop();
      await Promise.all([...liveServices].map((s) => s.stop(GRACE_MS)));
      await this.model?.close();
      this.say(code === 0 ? 'stopped' : 'stopped after a failure');
      process.exit(code);
    })();
    return this.#stopping;
  }

  /** The signals, the launcher's end, an uncaught exception and the process's exit, from now on. */
  handleExits(): void {
    // Ctrl-C reaches this script twice at once: from the terminal and relayed by npm. Only a signal
    // that comes a while after the first one means "stop now".
    let firstSignalAt = 0;
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
      process.on(signal, () => {
        if (!this.#stopping) {
          firstSignalAt = Date.now();
          return void this.shutdown(0, `${signal}: stopping every service (again to kill them at once)`);
        }
        if (Date.now() - firstSignalAt < 1000) return;
        this.say(`${signal} again: killing every service now`);
        for (const s of liveServices) s.signal('SIGKILL');
      });
    }
    // `kill <npm pid>` reaches npm's shell but not this script (see watchLauncher): act on it all the same.
    watchLauncher(
      (pid) =>
        void this.shutdown(
          0,
          `the process that launched npm start (pid ${pid}) is gone: stopping every service`,
        ),
    );
    // Last resort (an exception in this script): no child outlives it.
    process.on('exit', () => {
      this.signalBuild('SIGKILL');
      for (const s of liveServices) s.signal('SIGKILL');
    });
    process.on(
      'uncaughtException',
      (e) => void this.shutdown(1, `npm start failed: ${e.stack ?? e.message}`),
    );
  }

  private signalBuild(signal: NodeJS.Signals): void {
    if (this.buildPid === undefined) return;
    try {
      process.kill(this.buildPid, signal);
    } catch {
      // gone already
    }
  }
}
