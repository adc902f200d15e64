import {
  type CodedError,
  codedError,
  isErrorCode,
  isMeshError,
  MeshError,
  type ToolContext,
} from '@agentmesh/shared';
import { type Dispatcher, request } from 'undici';
import { abortableSleep } from '../abortable-sleep.js';
import { timeoutSignal } from '../timeout-signal.js';
import { traceToolCall } from '../tracing.js';

/**
 * How a tool call ended, as the ReAct loop records it; `detail` is for the log only (the
 * runner's own words: addresses, network errors), never for the model or the user.
 */
export type ToolOutcome = { ok: true; result: unknown } | { ok: false; error: CodedError; detail?: string };

/** One call's options as its attempts see them: the trace headers are fixed by its span. */
type Attempt = { signal: AbortSignal; timeoutMs: number; headers: Record<string, string> };

/** How long a call keeps retrying while the tool-host is unreachable (it may be restarting). */
const UNREACHABLE_BUDGET_MS = 30_000;

/** Calls tools on the tool-host over HTTP. */
export class ToolClient {
  constructor(
    private readonly baseUrl: string,
    private readonly internalToken: string | undefined,
    private readonly dispatcher?: Dispatcher,
  ) {}

  /**
   * Invokes a tool; every failure (HTTP, timeout) comes back as data with a reason. While the
   * tool-host is unreachable the call is repeated with the same Idempotency-Key, so the tool-host
   * decides from its record whether the tool runs again (docs/architecture/durability-and-fencing.md).
   */
  invoke(
    name: string,
    args: Record<string, unknown>,
    context: ToolContext,
    opts: { signal: AbortSignal; timeoutMs: number; traceparent?: string | undefined },
  ): Promise<ToolOutcome> {
    // In the runner's `execute_tool` span; every attempt carries its trace headers (docs/reference/traces.md).
    return traceToolCall(name, context, opts.traceparent, (headers) =>
      this.retrying(name, args, context, { ...opts, headers }),
    );
  }

  private async retrying(
    name: string,
    args: Record<string, unknown>,
    context: ToolContext,
    opts: Attempt,
  ): Promise<ToolOutcome> {
    const giveUpAt = Math.min(Date.parse(context.deadline), Date.now() + UNREACHABLE_BUDGET_MS);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(name, args, context, opts);
      } catch (e) {
        if (opts.signal.aborted) throw opts.signal.reason ?? e;
        if (isMeshError(e, 'cancelled')) throw e;
        if ((e as Error).name === 'TimeoutError') {
          return {
            ok: false,
            error: codedError('tool_timeout', `no answer within ${opts.timeoutMs} ms`),
          };
        }
        const delay = Math.min(2000, 100 * 2 ** attempt);
        if (Date.now() + delay >= giveUpAt) {
          return {
            ok: false,
            error: codedError('tool_failed', 'the tool-host could not be reached'),
            detail: `${this.baseUrl}: ${(e as Error).message}`,
          };
        }
        await abortableSleep(delay, opts.signal);
      }
    }
  }

  private async attempt(
    name: string,
    args: Record<string, unknown>,
    context: ToolContext,
    opts: Attempt,
  ): Promise<ToolOutcome> {
    const bounded = timeoutSignal(opts.signal, Math.max(1, opts.timeoutMs));
    try {
      return await this.call(name, args, context, opts, bounded.signal);
    } finally {
      bounded.clear();
    }
  }

  private async call(
    name: string,
    args: Record<string, unknown>,
    context: ToolContext,
    opts: { headers: Record<string, string> },
    signal: AbortSignal,
  ): Promise<ToolOutcome> {
    const res = await request(`${this.baseUrl.replace(/\/$/, '')}/tools/${encodeURIComponent(name)}/invoke`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': context.idempotencyKey,
        ...(this.internalToken ? { authorization: `Bearer ${this.internalToken}` } : {}),
        ...opts.headers,
      },
      body: JSON.stringify({ args, context }),
      signal,
      ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
    });
    const status = res.statusCode;
    const text = await res.body.text();
    let body: {
      result?: unknown;
      error?: { code?: string; message?: string; details?: { path: string; message: string }[] };
    };
    try {
      body = JSON.parse(text);
    } catch {
      return {
        ok: false,
        error: codedError('tool_failed', `the tool-host answered ${status} with a body that is not JSON`),
      };
    }
    if (status === 200) return { ok: true, result: body.result };
    const e = body.error ?? {};
    // The tool-host aborted the call because the invocation was cancelled (docs/architecture/durability-and-fencing.md): not a failure.
    if (e.code === 'cancelled') throw new MeshError('cancelled');
    const details = e.details?.map((d) => `${d.path || '/'}: ${d.message}`).join('; ');
    return {
      ok: false,
      error: codedError(
        isErrorCode(e.code) ? e.code : 'tool_failed',
        details ? `${e.message ?? ''} ${details}`.trim() : (e.message ?? `HTTP ${status}`),
      ),
    };
  }
}
