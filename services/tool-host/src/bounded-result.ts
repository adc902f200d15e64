import { MeshError, normalizeResult, ResultNormalizationError, truncateResult } from '@agentmesh/shared';

/**
 * What the tool-host answers and keeps of a tool's result (docs/reference/callables-and-results.md, docs/reference/bounds.md): the result itself
 * when its tool message would fit in `maxBytes` (MESH_MAX_RESULT_BYTES), else that tool message cut
 * as the invocation cuts it — a string as is, anything else its compact JSON, with the visible
 * marker. The invocation keeps no more, so neither does the outcome record (a 9 MB MCP result was
 * kept whole for 7 days). A result JSON cannot express fails the call, naming the tool and the path.
 */
export function boundedResult(result: unknown, tool: string, maxBytes: number): unknown {
  let text: string;
  try {
    text = JSON.stringify(result);
  } catch (e) {
    throw refusal(result, tool, e);
  }
  const content = typeof result === 'string' ? result : text;
  // A UTF-8 byte is at least one UTF-16 unit and at most three: most results need no count.
  if (content.length * 3 <= maxBytes || Buffer.byteLength(content, 'utf8') <= maxBytes) return result;
  return truncateResult(content, maxBytes);
}

/** Why a result cannot be sent: the walk's refusal with its path (a cycle, a BigInt, too deep). */
function refusal(result: unknown, tool: string, thrown: unknown): MeshError {
  try {
    normalizeResult(result);
  } catch (e) {
    if (e instanceof ResultNormalizationError)
      return new MeshError('tool_failed', e.about(`tool ${tool} result`).message);
  }
  return new MeshError(
    'tool_failed',
    `Tool ${tool} result is not JSON: ${(thrown as Error)?.message ?? String(thrown)}`,
  );
}
