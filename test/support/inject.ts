import type { FastifyInstance } from 'fastify';

/** What an injected request answered: its status, its body parsed as JSON, its headers. */
export interface Injected {
  status: number;
  /** Whatever shape the route answers. */
  json: any;
  headers: Record<string, unknown>;
}

/** Requests through `app.inject` (no socket), with `headers` unless a call gives its own. */
export function injector(app: FastifyInstance, headers?: Record<string, string>) {
  return async (
    method: 'GET' | 'POST' | 'DELETE',
    url: string,
    payload?: unknown,
    callHeaders = headers,
  ): Promise<Injected> => {
    const res = await app.inject({
      method,
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      ...(callHeaders ? { headers: callHeaders } : {}),
    });
    return {
      status: res.statusCode,
      json: res.body ? JSON.parse(res.body) : undefined,
      headers: res.headers,
    };
  };
}
