import type { KeyLayout } from '@agentmesh/shared';
import type { ReactStart, TakenActivation } from '../../loop/fast-path-ports.js';
import { TAKE_MARK } from './runner-lua.js';

/** What a worker's takes activate with: its agent, its runner, and its agent's first model call. */
export interface TakeSettings {
  agent: string;
  runner: string;
  keys: KeyLayout;
  react: ReactStart | undefined;
  /**
   * False while the runner has no free slot: a job taken then would wait for one `running`, so it
   * is taken as BullMQ takes it and activated once it has its slot (ACTIVATE, as on a cluster).
   */
  ready: () => boolean;
}

const ROOT = '\u0001';
const ID = '\u0002';

/** A key of the layout as the parts around its root id and invocation id, for meshKey in Lua. */
function keyParts(key: string, withId: boolean): string[] {
  const around = key.split(ROOT);
  const parts = around.length === 2 ? [around[0]!, ...around[1]!.split(ID)] : [];
  if (around[0]?.includes(ID) || parts.length !== (withId ? 3 : 2))
    throw new Error(
      `key layout: "${key}" must hold the root id once${withId ? ', then the invocation id once' : ''}`,
    );
  return parts;
}

/** A fetch step as ioredis defines it on a connection: the arguments as one list. */
type FetchCommand = (args: unknown[]) => Promise<unknown>;

/**
 * Activation in the take: a worker's fetch steps activate the invocation of the job they take in
 * the same Lua step (one round trip fewer before its model call, and no moment where the job is
 * active and its invocation not), and the reply waits here until the job's processor takes it.
 * Only on one Redis server: on a cluster a tree's keys and the queues live in different slots, and
 * the processor runs ACTIVATE itself.
 */
export class TakenActivations {
  private readonly taken = new Map<string, TakenActivation>();
  private head: string | undefined;

  /** Makes the `commands` (BullMQ's take steps, as fetch-scripts defines them) on `client` activate. */
  attach(client: object, commands: readonly string[], settings: TakeSettings): void {
    const { keys } = settings;
    const fixed = {
      agent: settings.agent,
      runner: settings.runner,
      ...(settings.react ? { react: settings.react } : {}),
      keys: {
        inv: keyParts(keys.invocation(ROOT, ID), true),
        calls: keyParts(keys.calls(ROOT, ID), true),
        events: keyParts(keys.events(ROOT), false),
        watch: keyParts(keys.watch(ROOT), false),
      },
    };
    // The settings as JSON with the clock last, written once: each take appends the times.
    this.head = `${TAKE_MARK}${JSON.stringify(fixed).slice(0, -1)},"now":"`;
    const host = client as Record<string, FetchCommand>;
    for (const name of commands) {
      const send = host[name];
      if (typeof send !== 'function') throw new Error(`${name} is not defined on the worker's connection`);
      host[name] = async (args) => {
        const raw = await send.call(client, settings.ready() ? [...args, this.settings(Date.now())] : args);
        this.keep(raw);
        return raw;
      };
    }
  }

  /** The last argument that makes a take step at time `now` activate (once attached). */
  settings(now: number): string {
    if (this.head === undefined) throw new Error('the takes are not attached to a connection');
    return `${this.head}${now}","nowIso":"${new Date(now).toISOString()}"}`;
  }

  /** Whether the take of job `jobId` activated its invocation (not yet taken by its processor). */
  has(jobId: string): boolean {
    return this.taken.has(jobId);
  }

  /** The activation the take of job `jobId` made (once), or undefined when it made none. */
  take(jobId: string | undefined): TakenActivation | undefined {
    if (jobId === undefined) return undefined;
    const taken = this.taken.get(jobId);
    this.taken.delete(jobId);
    return taken;
  }

  /** Keeps the activation of the job a take step took, forgetting any older one of the same job. */
  keep(raw: unknown): void {
    if (!Array.isArray(raw) || !raw[0] || typeof raw[1] !== 'string') return; // no job taken
    if (raw.length > 4) this.taken.set(raw[1], raw[4] as TakenActivation);
    else this.taken.delete(raw[1]);
  }
}
