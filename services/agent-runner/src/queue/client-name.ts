import type { KeyLayout } from '@agentmesh/shared';

/** The CLIENT SETNAME every connection of runner `id` bears (a client name holds no space or control byte). */
export function runnerClientName(keys: KeyLayout, id: string): string {
  return `${keys.prefix}:runner:${id}`.replace(/[^!-~]/g, '_');
}
