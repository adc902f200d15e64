import type { CodedError, ToolContext } from '@agentmesh/shared';
import { type Dispatcher, request } from 'undici';

/** How a tool call ended, as the ReAct loop records it. */
export type ToolOutcome = { ok: true; result: unknown } | { ok: false; error: CodedError };

/** Calls tools on the tool-host over HTTP. */
export class ToolClient {
  constructor(
    private readonly baseUrl: string,
    private readonly internalToken: string | undefined,
    private readonly dispatcher?: Dispatcher,
  ) {}

  /** Invokes a tool; every failure (HTTP, network, timeout) comes back as data with a reason. */
  async invoke(
    name: string,
    args: Record<string, unknown>,
    context: ToolContext,
    opts: { signal: AbortSignal; timeoutMs: number; traceparent?: string | undefined },
  ): Promise<ToolOutcome> {
    let status: number;
    let text: string;
    try {
      const res = await request(
        `${this.baseUrl.replace(/\/$/, '')}/tools/${encodeURIComponent(name)}/invoke`,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'idempotency-key': context.idempotencyKey,
            ...(this.internalToken ? { authorization: `Bearer ${this.internalToken}` } : {}),
            ...(opts.traceparent ? { traceparent: opts.traceparent } : {}),
          },
          body: JSON.stringify({ args, context }),
          signal: AbortSignal.any([opts.signal, AbortSignal.timeout(Math.max(1, opts.timeoutMs))]),
          ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
        },
      );
      status = res.statusCode;
      text = await res.body.text();
    } catch (e) {
      if (opts.signal.aborted) throw opts.signal.reason ?? e;
      const timedOut = (e as Error).name === 'TimeoutError';
      return timedOut
        ? { ok: false, error: { code: 'tool_timeout', message: `no answer within ${opts.timeoutMs} ms` } }
        : {
            ok: false,
            error: { code: 'tool_failed', message: `the tool-host is unreachable (${(e as Error).message})` },
          };
    }
    let body: {
      result?: unknown;
      error?: { code?: string; message?: string; details?: { path: string; message: string }[] };
    };
    try {
      body = JSON.parse(text);
    } catch {
      return {
        ok: false,
        error: {
          code: 'tool_failed',
          message: `the tool-host answered ${status} with a body that is not JSON`,
        },
      };
    }
    if (status === 200) return { ok: true, result: body.result };
    const e = body.error ?? {};
    const details = e.details?.map((d) => `${d.path || '/'}: ${d.message}`).join('; ');
    return {
      ok: false,
      error: {
        code: e.code ?? 'tool_failed',
        message: details ? `${e.message ?? ''} ${details}`.trim() : (e.message ?? `HTTP ${status}`),
      },
    };
  }
}
