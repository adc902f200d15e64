import type { JsonSchema } from '@agentmesh/shared';

/**
 * An error response of the OpenAPI document: the named `ErrorBody` component, described by the
 * codes it carries (the description becomes the response's, the `$ref` its content).
 */
export function errorResponse(description: string): JsonSchema {
  return { description, $ref: 'ErrorBody#' };
}

/** A success response whose body is a named component (`InvocationView`, `AgentDescription`…). */
export function namedResponse(component: string, description: string): JsonSchema {
  return { description, $ref: `${component}#` };
}

/** The error answers of routes that read Redis: it may be unreachable for a moment. */
export const UNAVAILABLE = errorResponse('`unavailable`: Redis is unreachable; try again later.');

/** A scoped API key asking for an agent outside its scope (only with MESH_API_KEYS). */
export const FORBIDDEN = errorResponse('`forbidden`: this API key may not use the agent.');

/**
 * One JSON-RPC 2.0 message of a protocol endpoint (MCP, A2A), as loosely as the gateway checks it:
 * the protocol's SDK checks the rest.
 */
export function jsonRpcMessage(title: string, description: string, idTypes: string[]): JsonSchema {
  return {
    title,
    description,
    type: 'object',
    properties: {
      jsonrpc: { type: 'string', enum: ['2.0'] },
      id: { type: idTypes },
      method: { type: 'string' },
      params: { type: 'object', additionalProperties: true },
      result: { type: 'object', additionalProperties: true },
      error: {
        type: 'object',
        properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
        required: ['code', 'message'],
      },
    },
    required: ['jsonrpc'],
  };
}
