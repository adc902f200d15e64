import type { InvocationView } from '@agentmesh/shared';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';

/** The `_meta` key naming the invocation behind a tools/call result. */
export const INVOCATION_META = 'agentmesh/invocationId';

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * An invocation as the answer of an MCP tools/call (docs/guides/mcp.md): text output as text content;
 * structured output (an object) as `structuredContent` plus its JSON as text; any other output
 * as its JSON. A failed or cancelled invocation, or one still running after `waitSeconds`, is a
 * result with `isError: true` whose text names the invocation, so a client can follow it.
 */
export function toolResult(view: InvocationView, waitSeconds: number): CallToolResult {
  const _meta = { [INVOCATION_META]: view.id };
  const error = (text: string): CallToolResult => ({
    content: [{ type: 'text', text }],
    isError: true,
    _meta,
  });
  switch (view.status) {
    case 'succeeded': {
      const out = view.output;
      if (typeof out === 'string') return { content: [{ type: 'text', text: out }], _meta };
      const text = JSON.stringify(out ?? null);
      return isPlainObject(out)
        ? { content: [{ type: 'text', text }], structuredContent: out, _meta }
        : { content: [{ type: 'text', text }], _meta };
    }
    case 'failed':
    case 'cancelled':
      return error(
        `Invocation ${view.id} ${view.status}: ${view.error?.code ?? view.status}: ${view.error?.message ?? ''}`.trim(),
      );
    default:
      return error(
        `Invocation ${view.id} is still ${view.status} after ${waitSeconds} s; follow it at GET /invocations/${view.id}.`,
      );
  }
}
