import {
  codedError,
  compileSchema,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_TOOL_TIMEOUT_MS,
  describeValidation,
  isMeshError,
  type Logger,
  MeshError,
  type ToolContext,
  type ToolRunContext,
} from '@agentmesh/shared';
import { boundedResult } from './bounded-result.js';
import type { StoredOutcome } from './idempotency/outcome-store.js';
import type { LoadedTool } from './load-tools.js';
import { traceToolRun } from './tracing.js';

/** How a run ended: its outcome, or `abandoned` when its invocation was cancelled before it finished. */
export type RunResult = { outcome: StoredOutcome; abandoned: boolean };

/**
 * Runs one tool call under its timeout, with the injected context; every failure becomes an
 * outcome (a throw is `tool_failed` with its message, a result failing the output schema too).
 * Only `cancelled` (the invocation's cancellation) aborts it early, never the caller leaving;
 * a tool so aborted that did not finish, or one that throws `tool_in_doubt`, leaves the call
 * abandoned (its key in doubt).
 */
export function runTool(
  tool: LoadedTool,
  args: unknown,
  context: ToolContext,
  log: Logger,
  cancelled: AbortSignal,
  headers: Record<string, string | string[] | undefined> = {},
  maxResultBytes = DEFAULT_MAX_RESULT_BYTES,
): Promise<RunResult> {
  // In its `execute_tool` span, whose traceparent the tool sees (docs/reference/traces.md).
  return traceToolRun(tool.info.name, context, headers, (traceparent) =>
    execute(tool, args, context, log, cancelled, traceparent, maxResultBytes),
  );
}

async function execute(
  tool: LoadedTool,
  args: unknown,
  context: ToolContext,
  log: Logger,
  cancelled: AbortSignal,
  traceparent: string | undefined,
  maxResultBytes: number,
): Promise<RunResult> {
  const timeoutMs = tool.info.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = AbortSignal.any([timeout, cancelled]);
  const ctx: ToolRunContext = {
    ...context,
    deadline: new Date(context.deadline),
    signal,
    log,
    ...(traceparent ? { traceparent } : {}),
  };
  try {
    const result = await Promise.race([
      Promise.resolve(tool.run(args, ctx)),
      new Promise<never>((_, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
      ),
    ]);
    if (tool.info.output) {
      const out = compileSchema(tool.info.output)(result);
      if (!out.ok) {
        const reason = `the result does not match the output schema: ${describeValidation(out.details)}`;
        return { outcome: { ok: false, error: codedError('tool_failed', reason) }, abandoned: false };
      }
    }
    const bounded = boundedResult(result === undefined ? null : result, tool.info.name, maxResultBytes);
    return { outcome: { ok: true, result: bounded }, abandoned: false };
  } catch (e) {
    if (cancelled.aborted) {
      return {
        outcome: { ok: false, error: codedError('cancelled') },
        abandoned: true,
      };
    }
    if (timeout.aborted) {
      return {
        outcome: { ok: false, error: codedError('tool_timeout', `no answer within ${timeoutMs} ms`) },
        abandoned: false,
      };
    }
    // The tool lost its way to whatever did the work (an MCP server that died mid-call): the key stays in doubt.
    if (isMeshError(e, 'tool_in_doubt')) {
      return {
        outcome: { ok: false, error: codedError('tool_in_doubt', e.message) },
        abandoned: true,
      };
    }
    const message = e instanceof MeshError || e instanceof Error ? e.message : String(e);
    return { outcome: { ok: false, error: codedError('tool_failed', message) }, abandoned: false };
  }
}
