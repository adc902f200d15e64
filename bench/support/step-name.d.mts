/** A Redis command as the bench names it: a script by its key count and first key, ids as `*`. */
export function stepName(command: string, keyCount: unknown, firstKey: unknown): string;
