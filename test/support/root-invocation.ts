import { encodeEvent, encodeNewInvocation, type KeyLayout } from '@agentmesh/shared';
import type { MeshScripts } from '@agentmesh/shared/redis';

/**
 * Writes a new root invocation `id` of `agent` as the gateway's create does (CREATE_INVOCATION:
 * `queued`, its status event), with a deadline a minute away unless given, and definition hash 'x'.
 */
export async function createRootInvocation(
  scripts: MeshScripts,
  keys: KeyLayout,
  id: string,
  opts: { agent?: string; deadline?: number; budget?: number } = {},
): Promise<void> {
  const agent = opts.agent ?? 'solo';
  const now = Date.now();
  await scripts.createInvocation(
    2, // not listed as recent
    keys.invocation(id, id),
    keys.events(id),
    encodeEvent({ id, agent }, 'status', { status: 'queued' }, now),
    3600,
    ...['', '', '', '', ''],
    ...encodeNewInvocation({
      id,
      agent,
      input: { prompt: 'go' },
      rootId: id,
      depth: 0,
      createdAt: now,
      deadline: opts.deadline ?? now + 60_000,
      defHash: 'x',
      ...(opts.budget ? { budget: opts.budget } : {}),
    }),
  );
}
