// How the bench names a Redis command it reads (bench/hops.ts's timelines, bench/redis-time.ts's
// table): the command, and for a script its key count and its first key with the ids in it replaced
// by `*`, which says which step it is ({mesh-q}:<agent>:wait with 11 keys is a runner's take). Plain
// JavaScript: hop-trace.mjs, loaded into compiled services as it is, imports it too.

/**
 * @param {string} command
 * @param {unknown} keyCount
 * @param {unknown} firstKey
 */
export function stepName(command, keyCount, firstKey) {
  const name = command.toLowerCase();
  if (name !== 'evalsha' && name !== 'eval') return name;
  const key = String(firstKey ?? '').replace(/[0-9a-f]{8}-[0-9a-f-]{27}|[A-Za-z0-9_-]{20,}/g, '*');
  return `${name} ${keyCount ?? '?'} ${key}`;
}
