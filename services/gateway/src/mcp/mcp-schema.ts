import type { JsonSchema } from '@agentmesh/shared';
import { errorResponse, jsonRpcMessage } from '../routes/responses.js';

/** One JSON-RPC 2.0 message of MCP. */
const JsonRpcMessage = jsonRpcMessage(
  'JsonRpcMessage',
  'A JSON-RPC 2.0 message of MCP: a request (`id`, `method`), a notification (`method`) or a response (`id`, `result` or `error`).',
  ['string', 'integer'],
);

/** How POST /mcp appears in the OpenAPI document: a protocol endpoint, described for what HTTP sees. */
export const MCP_SCHEMA: JsonSchema = {
  tags: ['mcp'],
  operationId: 'mcp',
  summary: 'The agents as an MCP server (Streamable HTTP, stateless)',
  description:
    'Speak MCP here with any MCP client: `tools/list` lists the agents this API key may use as tools ' +
    "(each with the agent's input schema, and its output schema when it has one); `tools/call` invokes " +
    'one and waits for it (MESH_MCP_WAIT_SECONDS, default 300): text output as text content, structured ' +
    'output as `structuredContent` plus its JSON as text; a failed invocation, or one still running, is ' +
    'a result with `isError: true` naming the invocation. A `notifications/cancelled` cancels the ' +
    'invocation. GET and DELETE answer 405 (no standalone stream, no session to end).',
  headers: {
    type: 'object',
    properties: {
      'Mcp-Session-Id': {
        type: 'string',
        description:
          'The token the `initialize` answer carried: it lets a cancellation find this client’s call.',
      },
      'MCP-Protocol-Version': { type: 'string', description: 'The negotiated MCP protocol version.' },
    },
  },
  body: {
    anyOf: [JsonRpcMessage, { type: 'array', items: JsonRpcMessage, minItems: 1 }],
  },
  response: {
    200: {
      description:
        'A text/event-stream answering the request: `event: message` whose `data:` is a JSON-RPC message (the response, after any notification).',
      content: { 'text/event-stream': { schema: JsonRpcMessage } },
    },
    202: { description: 'A notification or response was accepted; no body.', type: 'null' },
    400: errorResponse(
      '`invalid_json` or `invalid_input` (the body is no JSON-RPC message; `details[].path` names each problem). ' +
        'A message the MCP SDK refuses past that, or an unsupported `MCP-Protocol-Version`, is a JSON-RPC error, as the MCP transport prescribes.',
    ),
    406: {
      description:
        '`Accept` does not list both application/json and text/event-stream: a JSON-RPC error, as the MCP transport prescribes.',
      content: { 'application/json': { schema: JsonRpcMessage } },
    },
    413: errorResponse('`payload_too_large`: the body is over the limit (1 MiB by default).'),
    415: errorResponse('`unsupported_media_type`: only application/json bodies are accepted.'),
  },
};
