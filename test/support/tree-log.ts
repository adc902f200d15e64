import { keyLayout } from '@agentmesh/shared';
import type { TestMesh } from './mesh.js';

/**
 * Writes a tree's streams as the mesh's services do, for gateway tests without a runner: an
 * invocation that stays queued, deltas in its delta stream, structural events in its log.
 */
export interface TreeLog {
  /** The `seq` the next delta gets (deltas count from 0 across the whole test file). */
  readonly seq: number;
  /** Starts an invocation of `chat` that stays queued (no runner); returns its id. */
  queued(base: string): Promise<string>;
  /** Appends a delta as a runner does (one field `e`, MAXLEN 10,000 unless told); returns its entry id. */
  delta(root: string, content: string, o?: { of?: string; maxlen?: number }): Promise<string>;
  /** Appends a structural event to the tree's log (a tool call of the root); returns its entry id. */
  structural(root: string, name: string, pad?: string): Promise<string>;
}

/** A TreeLog over `mesh`'s Redis. */
export function treeLog(mesh: TestMesh): TreeLog {
  const keys = keyLayout(mesh.prefix);
  let seq = 0;
  return {
    get seq() {
      return seq;
    },
    async queued(base) {
      const res = await fetch(`${base}/agents/chat/invoke?wait=0`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: 'hi' }),
      });
      return ((await res.json()) as { id: string }).id;
    },
    async delta(root, content, o = {}) {
      const event = {
        invocationId: o.of ?? root,
        agent: 'chat',
        type: 'delta',
        at: new Date().toISOString(),
        rootId: root,
        depth: 0,
        data: { callId: 'c1', seq: seq++, content },
      };
      const maxlen = String(o.maxlen ?? 10_000);
      return (await mesh.client.xadd(keys.deltas(root), 'MAXLEN', maxlen, '*', 'e', JSON.stringify(event)))!;
    },
    async structural(root, name, pad = '') {
      const event = {
        invocationId: root,
        agent: 'chat',
        type: 'tool_call',
        at: new Date().toISOString(),
        data: {
          callId: name,
          name,
          status: 'succeeded',
          ...(pad ? { error: { code: 'x', message: pad } } : {}),
        },
      };
      return (await mesh.client.xadd(keys.events(root), '*', 'e', JSON.stringify(event)))!;
    },
  };
}
