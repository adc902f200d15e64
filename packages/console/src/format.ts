import type { InvocationView, Usage } from './types';

/** A duration for people: `850 ms`, `12.4 s`, `3 min 5 s`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${s % 60} s`;
}

/** Milliseconds since the epoch of an ISO time, or undefined. */
export function ms(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
}

/** The tokens of a usage (prompt + completion). */
export const tokens = (u: Usage | undefined): number => (u ? u.promptTokens + u.completionTokens : 0);

/** The local time of day of an ISO time, with the date when it is not today. */
export function clock(iso: string | undefined): string {
  const t = ms(iso);
  if (t === undefined) return '';
  const d = new Date(t);
  const today = new Date().toDateString() === d.toDateString();
  return today ? d.toLocaleTimeString() : d.toLocaleString();
}

/** Pretty JSON for reading (a string is shown as is). */
export function pretty(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/**
 * What a node's output element holds (docs/guides/console.md): once it succeeded, its output (a string as
 * is, else compact JSON); before, the text of its model calls in turn order.
 */
export function nodeText(view: InvocationView | undefined, texts: Record<string, string>): string {
  if (view?.status === 'succeeded' && view.output !== undefined) {
    return typeof view.output === 'string' ? view.output : JSON.stringify(view.output);
  }
  return Object.entries(texts)
    .sort(([a], [b]) => turnOf(a) - turnOf(b))
    .map(([, text]) => text)
    .filter((text) => text !== '')
    .join('\n\n');
}

// Linear: one digit run after a fixed prefix.
const turnOf = (callId: string) => Number(/^t(\d+)-/.exec(callId)?.[1] ?? 0);
