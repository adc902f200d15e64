import {
  type CallRecord,
  type InvocationState,
  isInvocationId,
  type KeyLayout,
  MeshError,
  rootOf,
} from '@agentmesh/shared';
import type { MeshScripts } from '@agentmesh/shared/redis';
import { decodeInvocationSafely } from '../invocations/read-invocation-safely.js';

/** How many call records, and how many bytes of them, a fork reads at most (docs/reference/bounds.md, docs/guides/durability.md). */
export interface ForkBounds {
  maxRecords: number;
  maxBytes: number;
}

/**
 * Reads the invocation a fork starts from, once (READ_FORK_SOURCE: one step, one round trip):
 * undefined for a malformed or unknown id; `fork_too_large` when its records pass the bounds, which
 * are then not read at all. The caller checks visibility first: `tooLarge` is thrown by `records()`.
 */
export async function readForkSource(
  scripts: MeshScripts,
  keys: KeyLayout,
  id: string,
  bounds: ForkBounds,
): Promise<{ state: InvocationState; records(): CallRecord[] } | undefined> {
  if (!isInvocationId(id)) return undefined;
  const root = rootOf(id);
  const [stateFlat, callsFlat, count, bytes, textsFlat] = (await scripts.readForkSource(
    keys.invocation(root, id),
    keys.calls(root, id),
    keys.texts(root),
    bounds.maxRecords,
    bounds.maxBytes,
  )) as [string[], string[], number, number, string[]];
  // The records come with their texts put back: the fork stores its own copy (fork-service.ts).
  const found = decodeInvocationSafely(stateFlat, callsFlat, textsFlat);
  if (!found) return undefined;
  return {
    state: found.state,
    records: () => {
      if (count > bounds.maxRecords || bytes > bounds.maxBytes) throw tooLarge(id, count, bytes, bounds);
      return found.calls;
    },
  };
}

function tooLarge(id: string, count: number, bytes: number, bounds: ForkBounds): MeshError {
  const over =
    count > bounds.maxRecords
      ? `${count} call records (MESH_MAX_FORK_RECORDS is ${bounds.maxRecords})`
      : `${bytes} bytes of call records (MESH_MAX_FORK_BYTES is ${bounds.maxBytes})`;
  return new MeshError('fork_too_large', `Invocation ${id} has ${over}: too many to fork.`);
}
