import type { JsonSchema } from '@agentmesh/shared';
import { errorResponse, jsonRpcMessage } from '../routes/responses.js';

const AGENT_PARAM = {
  type: 'object',
  properties: { agent: { type: 'string', description: 'The name of the agent.' } },
  required: ['agent'],
};

/** One JSON-RPC 2.0 message of A2A. */
const A2aRpcMessage = jsonRpcMessage(
  'A2aRpcMessage',
  'A JSON-RPC 2.0 message of A2A v1.0: a request (`id`, `method`, `params`) or its response.',
  ['string', 'integer', 'null'],
);

/** How an agent's A2A card route appears in the OpenAPI document. */
export const A2A_CARD_SCHEMA: JsonSchema = {
  tags: ['a2a'],
  operationId: 'getA2aAgentCard',
  summary: "An agent's A2A agent card (public)",
  description:
    'The A2A v1.0 agent card of the agent: name, description, one skill, its JSON-RPC interface ' +
    '(`POST /a2a/{agent}`, from MESH_PUBLIC_URL or the request’s own origin), and the bearer scheme when API keys are on.',
  params: AGENT_PARAM,
  response: {
    200: { description: 'The agent card (A2A v1.0 JSON).', type: 'object', additionalProperties: true },
    404: errorResponse('`agent_not_found`: no agent has this name.'),
    503: errorResponse('`unavailable`: the tool catalogue has not been published yet.'),
  },
};

/** How an agent's A2A JSON-RPC endpoint appears in the OpenAPI document. */
export const A2A_RPC_SCHEMA: JsonSchema = {
  tags: ['a2a'],
  operationId: 'a2aJsonRpc',
  summary: 'The agent over A2A (JSON-RPC)',
  description:
    'Speak A2A v1.0 here with any A2A client: `SendMessage`, `SendStreamingMessage`, `GetTask`, `CancelTask`, ' +
    '`SubscribeToTask`. A task is an invocation (task id = invocation id); a text part is the prompt, a data part the ' +
    'structured input; the answer is the task’s artifact. Protocol errors are JSON-RPC errors with HTTP 200.',
  params: AGENT_PARAM,
  headers: {
    type: 'object',
    properties: {
      'A2A-Version': {
        type: 'string',
        description:
          'The A2A protocol version: `1.0` (absent means 0.3, which this endpoint does not serve).',
      },
    },
  },
  body: A2aRpcMessage,
  response: {
    200: {
      description:
        'A JSON-RPC response (application/json), or for the streaming methods a text/event-stream whose `data:` lines are JSON-RPC responses.',
      content: {
        'application/json': { schema: A2aRpcMessage },
        'text/event-stream': { schema: A2aRpcMessage },
      },
    },
    400: errorResponse('`invalid_json` or `invalid_input`: the body is no JSON-RPC message.'),
    403: errorResponse('`forbidden`: this API key may not use the agent.'),
    404: errorResponse('`agent_not_found`: no agent has this name.'),
    413: errorResponse('`payload_too_large`: the body is over the limit (1 MiB by default).'),
    415: errorResponse('`unsupported_media_type`: only application/json bodies are accepted.'),
    503: errorResponse('`unavailable`: the tool catalogue has not been published yet.'),
  },
};
