import { MeshError } from '@agentmesh/shared';

/** Provider statuses worth retrying: timeouts, conflicts, rate limits and server errors. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Milliseconds a `retry-after` header asks for (seconds or an HTTP date), or undefined. */
export function retryAfterMs(header: string | string[] | undefined, now = Date.now()): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The one place that turns a provider's HTTP failure into a coded, retry-classified error. */
export function classifyHttpError(status: number, body: string): MeshError {
  let detail = body.slice(0, 500);
  try {
    const parsed = JSON.parse(body) as { error?: { message?: string } };
    if (parsed.error?.message) detail = parsed.error.message;
  } catch {
    // not JSON: keep the raw text
  }
  const code = isRetryableStatus(status) ? 'model_unavailable' : 'model_error';
  return new MeshError(code, `The model endpoint answered ${status}: ${detail}`);
}
