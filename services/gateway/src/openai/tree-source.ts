import type { MeshEvent } from '@agentmesh/shared';
import { STREAM_START } from '../events/tree-position.js';
import type { TreeStreams } from '../events/tree-streams.js';

/**
 * The events of a fresh tree a streamed chat completion reads: its structural events and its
 * delta events, from their starts, until `signal` aborts (the caller stops at the root's end).
 * Injected into the route, so another reader of the tree's streams can stand in for this one.
 */
export type TreeSource = (rootId: string, signal: AbortSignal) => AsyncIterable<MeshEvent>;

/**
 * A TreeSource over the gateway's tree streams (TreeStreams, the one reader of a tree's two Redis
 * streams, docs/reference/rest-api.md#events): both from their start, ending after the root's
 * terminal status, or when `signal` aborts. The stream keeps the tree watched while it is open.
 */
export function treeStreamSource(streams: TreeStreams): TreeSource {
  return async function* read(rootId, signal) {
    const stream = await streams.open({
      id: rootId,
      deltas: true,
      from: { events: STREAM_START, deltas: STREAM_START },
    });
    const close = () => stream.close();
    signal.addEventListener('abort', close, { once: true });
    if (signal.aborted) close();
    try {
      for await (const item of stream) yield item.event;
    } finally {
      signal.removeEventListener('abort', close);
      stream.close();
    }
  };
}
