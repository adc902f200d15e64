/** The visible marker appended to a truncated result; `shown` and `total` are UTF-8 byte counts. */
export function truncationMarker(shown: number, total: number): string {
  return `\n…[truncated: ${total} bytes total, showing the first ${shown}]`;
}

/**
 * Keeps `text` within `maxBytes` UTF-8 bytes: when over, cuts it at a character boundary and
 * appends the truncation marker, the marker included in the budget.
 */
export function truncateResult(text: string, maxBytes: number): string {
  const budget = Math.max(0, Math.floor(maxBytes));
  const bytes = Buffer.from(text, 'utf8');
  const total = bytes.length;
  if (!(total > budget)) return text; // also for an Infinity or NaN budget: no limit
  const fits = (room: number) => room + Buffer.byteLength(truncationMarker(room, total), 'utf8') <= budget;
  // The marker's length depends on the number it shows: start from the room left beside the
  // widest marker (it always fits) and grow while a shorter number leaves a byte more.
  if (!fits(0)) return cutAtCharBoundary(bytes, budget); // no room even for the marker
  let room = Math.max(0, budget - Buffer.byteLength(truncationMarker(budget, total), 'utf8'));
  while (fits(room + 1)) room++;
  const kept = cutAtCharBoundary(bytes, room);
  return kept + truncationMarker(Buffer.byteLength(kept, 'utf8'), total);
}

/** The longest prefix of `bytes` of at most `limit` bytes that ends on a whole UTF-8 character. */
export function cutAtCharBoundary(bytes: Buffer, limit: number): string {
  let end = Math.min(limit, bytes.length);
  // 0b10xxxxxx is a continuation byte: the character started earlier, so it does not fit.
  while (end > 0 && end < bytes.length && ((bytes[end] ?? 0) & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end).toString('utf8');
}
