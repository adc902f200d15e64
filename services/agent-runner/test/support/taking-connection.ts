import type { KeyLayout } from '@agentmesh/shared';
import { Redis } from 'ioredis';
import type { ReactStart } from '../../src/loop/fast-path-ports.js';
import { defineFetchScripts, FETCH_COMMANDS } from '../../src/queue/fast-path/fetch-scripts.js';
import { TakenActivations } from '../../src/queue/fast-path/take-activation.js';

/**
 * A worker's connection as a runner builds it on one Redis server: the changed fetch steps, whose
 * takes activate the invocations of `agent`'s jobs (runner `r1`), while `ready` says so.
 */
export function takingConnection(
  url: string,
  agent: string,
  opts: { keys: KeyLayout; react?: ReactStart; ready?: () => boolean },
): { connection: Redis; takes: TakenActivations } {
  const connection = new Redis(url, { maxRetriesPerRequest: null });
  defineFetchScripts(connection);
  const takes = new TakenActivations();
  takes.attach(connection, FETCH_COMMANDS, {
    agent,
    runner: 'r1',
    keys: opts.keys,
    react: opts.react,
    ready: opts.ready ?? (() => true),
  });
  return { connection, takes };
}
