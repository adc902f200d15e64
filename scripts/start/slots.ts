/**
 * The mesh's services as npm start runs them, one slot each: starting a slot's service (compiled
 * JavaScript run by node), stopping it as asked, starting the tool-host until it published its
 * catalogue. An exit nobody asked for stops the mesh; under `npm run dev` it is said, and the next
 * change starts the service again.
 */
import type { MeshOutput } from '../mesh-output.js';
import { LEVELS } from '../mesh-output.js';
import { type ExitStatus, type Service, spawnService } from '../spawn-service.js';
import { GRACE_MS, type MeshLifecycle } from './lifecycle.js';
import type { Say } from './say.js';

// A service that exits because Ctrl-C reached the whole process group must not read as a crash.
const SIGNAL_RACE_MS = 300;

/** One service of the mesh as npm start runs it; `npm run dev` replaces `service` on a restart. */
export interface Slot {
  name: string;
  main: string;
  env: NodeJS.ProcessEnv;
  onLine?: (line: string) => void;
  service?: Service;
}

export interface MeshSlots {
  toolHost: Slot;
  runners: Slot[];
  gateway: Slot;
}

/** The slots of the tool-host, one runner per metrics port (each told its own) and the gateway. */
export function meshSlots(
  childEnv: NodeJS.ProcessEnv,
  metricsPorts: number[],
  onRunnerLine: (line: string) => void,
): MeshSlots {
  return {
    toolHost: { name: 'tool-host', main: 'services/tool-host/dist/main.js', env: childEnv },
    runners: metricsPorts.map(
      (port, i): Slot => ({
        name: `runner-${i + 1}`,
        main: 'services/agent-runner/dist/main.js',
        env: { ...childEnv, RUNNER_METRICS_PORT: String(port) },
        onLine: onRunnerLine,
      }),
    ),
    gateway: { name: 'gateway', main: 'services/gateway/dist/main.js', env: childEnv },
  };
}

export interface SlotRunnerOptions {
  root: string;
  output: MeshOutput;
  dev: boolean;
  say: Say;
  lifecycle: MeshLifecycle;
}

/** Starts and stops the slots' services. */
export class SlotRunner {
  constructor(private readonly o: SlotRunnerOptions) {}

  /** Starts a slot's service; an exit nobody asked for stops the mesh (`npm run dev`: says so, and waits). */
  start(slot: Slot): Service {
    const { root, output, dev, say, lifecycle } = this.o;
    // Compiled JavaScript run by node (the build ran first): no TypeScript loader in a service.
    const service = spawnService(slot.name, process.execPath, ['--conditions=agentmesh-dist', slot.main], {
      env: slot.env,
      cwd: root,
      output,
      onLine: (line) => slot.onLine?.(line),
    });
    slot.service = service;
    void service.exited.then((status) => {
      setTimeout(() => {
        if (lifecycle.stopping || slot.service !== service) return; // stopping, or replaced by a restart
        if (dev)
          say(`${slot.name} exited (${describe(status)}); it starts again on the next change`, LEVELS.error);
        else
          void lifecycle.shutdown(
            1,
            `${slot.name} exited unexpectedly (${describe(status)}); stopping the mesh`,
          );
      }, SIGNAL_RACE_MS);
    });
    return service;
  }

  /** Stops a slot's service as asked: its exit is no crash (start() ignores a slot's former service). */
  async stop(slot: Slot): Promise<void> {
    const service = slot.service;
    slot.service = undefined;
    await service?.stop(GRACE_MS);
  }

  /** Starts the tool-host; true once it says it published its catalogue, false if it exits first. */
  async startToolHost(slot: Slot): Promise<boolean> {
    let published!: (ok: boolean) => void;
    const outcome = new Promise<boolean>((resolve) => {
      published = resolve;
    });
    slot.onLine = (line) => {
      if (line.includes('catalogue published')) published(true);
    };
    void this.start(slot).exited.then(() => published(false));
    const ok = await outcome;
    slot.onLine = undefined;
    return ok;
  }
}

function describe(status: ExitStatus): string {
  return status.signal ? `signal ${status.signal}` : `exit code ${status.code}`;
}
