import type { MeshRedis } from '@agentmesh/shared/redis';

/**
 * What XINFO STREAM says of a tree's delta stream (undefined when it does not exist): its last id,
 * and when entries were trimmed from it, its first (a position before that may have lost deltas).
 */
export async function deltaStreamInfo(
  redis: MeshRedis,
  key: string,
): Promise<{ lastGenerated: string; trimmedBefore: string | undefined } | undefined> {
  let reply: unknown[];
  try {
    reply = (await redis.xinfo('STREAM', key)) as unknown[];
  } catch (e) {
    if (/no such key/i.test((e as Error).message)) return undefined;
    throw e;
  }
  const field = (name: string) => {
    const i = reply.indexOf(name);
    return i >= 0 ? reply[i + 1] : undefined;
  };
  const first = field('first-entry') as [string, string[]] | null | undefined;
  const trimmed = Number(field('entries-added')) > Number(field('length'));
  return {
    lastGenerated: String(field('last-generated-id') ?? '0-0'),
    trimmedBefore: trimmed ? (first?.[0] ?? String(field('last-generated-id'))) : undefined,
  };
}
