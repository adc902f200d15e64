import { apiKey, refuseKey } from './auth';

/** An error answer of the mesh: its HTTP status and `{error: {code, message, details?}}`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { path: string; message: string }[] = [],
  ) {
    super(message);
  }
}

/** The headers of every request: the tab's key as `Authorization: Bearer` (docs/guides/console.md). */
export function authHeaders(extra: Record<string, string> = {}): Record<string, string> {
  const key = apiKey.value;
  return key ? { ...extra, authorization: `Bearer ${key}` } : extra;
}

/** Fetches `path` of this origin as JSON; a 401 forgets the key and asks for one. */
export async function api<T>(
  path: string,
  init: { method?: string; body?: unknown; signal?: AbortSignal } = {},
): Promise<T> {
  const res = await fetch(path, {
    method: init.method ?? 'GET',
    headers: authHeaders(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    ...(init.signal ? { signal: init.signal } : {}),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (res.status === 401) refuseKey();
  if (!res.ok) {
    const e = (json as { error?: { code?: string; message?: string; details?: [] } } | undefined)?.error;
    throw new ApiError(res.status, e?.code ?? 'http_error', e?.message ?? `HTTP ${res.status}`, e?.details);
  }
  return json as T;
}
