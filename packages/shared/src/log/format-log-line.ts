// pino's own fields, and `service`, which npm start's prefix already shows.
const OMITTED = new Set(['level', 'time', 'pid', 'hostname', 'service', 'v']);

/** One human-readable line for a pino record: the message, then its fields as `key=value`. */
export function formatLogLine(log: Record<string, unknown>, messageKey = 'msg'): string {
  const parts = [typeof log[messageKey] === 'string' ? (log[messageKey] as string) : ''];
  for (const [key, value] of Object.entries(log)) {
    if (key === messageKey || OMITTED.has(key) || value === undefined) continue;
    parts.push(`${key}=${showValue(value)}`);
  }
  return parts.filter(Boolean).join(' ');
}

function showValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}
