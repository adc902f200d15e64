import type { JsonSchema } from '@agentmesh/shared';

const usage = {
  type: 'object',
  description: "The whole tree's usage: every model call of the agent and of its sub-agents.",
  properties: {
    prompt_tokens: { type: 'integer' },
    completion_tokens: { type: 'integer' },
    total_tokens: { type: 'integer' },
  },
  required: ['prompt_tokens', 'completion_tokens', 'total_tokens'],
};

/** The components of the /v1 operations, each under its own `$id` (added to the app before the routes). */
export const OPENAI_SCHEMAS: JsonSchema[] = [
  {
    $id: 'OpenAIErrorBody',
    title: 'OpenAIErrorBody',
    description: "An error in OpenAI's shape; `code` is the mesh's stable error code.",
    type: 'object',
    properties: {
      error: {
        type: 'object',
        properties: {
          message: { type: 'string' },
          type: { type: 'string', enum: ['invalid_request_error', 'server_error'] },
          code: { type: 'string' },
        },
        required: ['message', 'type', 'code'],
      },
    },
    required: ['error'],
  },
  {
    $id: 'Model',
    title: 'Model',
    description: 'An agent, as an OpenAI model: its `id` is the agent name.',
    type: 'object',
    properties: {
      id: { type: 'string' },
      object: { type: 'string', enum: ['model'] },
      created: { type: 'integer', description: 'When this gateway started (seconds since the epoch).' },
      owned_by: { type: 'string', enum: ['agentmesh'] },
    },
    required: ['id', 'object', 'created', 'owned_by'],
  },
  {
    $id: 'ChatCompletion',
    title: 'ChatCompletion',
    description: "The agent's answer: `content` is the output (JSON text for a structured one).",
    type: 'object',
    properties: {
      id: { type: 'string', description: '`chatcmpl-` and the invocation id.' },
      object: { type: 'string', enum: ['chat.completion'] },
      created: { type: 'integer' },
      model: { type: 'string' },
      choices: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            index: { type: 'integer' },
            message: {
              type: 'object',
              properties: {
                role: { type: 'string', enum: ['assistant'] },
                content: { type: 'string' },
                refusal: { type: 'null' },
              },
              required: ['role', 'content'],
            },
            logprobs: { type: 'null' },
            finish_reason: { type: 'string', enum: ['stop'] },
          },
          required: ['index', 'message', 'finish_reason'],
        },
      },
      usage,
    },
    required: ['id', 'object', 'created', 'model', 'choices', 'usage'],
  },
  {
    $id: 'ChatCompletionChunk',
    title: 'ChatCompletionChunk',
    description:
      "One `data:` event of a streamed answer: content deltas of the agent's model calls, then " +
      '`finish_reason: stop`, then (with `stream_options.include_usage`) empty `choices` and the usage; ' +
      'the stream ends with `data: [DONE]`. A failure after the stream began is `data: {"error": …}` (OpenAIErrorBody).',
    type: 'object',
    properties: {
      id: { type: 'string' },
      object: { type: 'string', enum: ['chat.completion.chunk'] },
      created: { type: 'integer' },
      model: { type: 'string' },
      choices: {
        type: 'array',
        items: {
          type: 'object',
          properties: {
            index: { type: 'integer' },
            delta: {
              type: 'object',
              properties: {
                role: { type: 'string', enum: ['assistant'] },
                content: { type: 'string' },
              },
            },
            logprobs: { type: 'null' },
            finish_reason: { type: ['string', 'null'], enum: ['stop', null] },
          },
          required: ['index', 'delta', 'finish_reason'],
        },
      },
      usage,
    },
    required: ['id', 'object', 'created', 'model', 'choices'],
  },
];

/** An error response of a /v1 operation: the `OpenAIErrorBody` component, described by its codes. */
export function openAiErrorResponse(description: string): JsonSchema {
  return { description, $ref: 'OpenAIErrorBody#' };
}

/** The body of `POST /v1/chat/completions`: OpenAI's, of which the mesh reads these fields. */
export const ChatCompletionRequest: JsonSchema = {
  type: 'object',
  description:
    "OpenAI's chat completion request. The mesh reads `model` (an agent), `messages` and `stream`, " +
    '`stream_options`; other fields (temperature…) are accepted and ignored: the agent has its own model.',
  properties: {
    model: { type: 'string', description: 'The name of an agent of this mesh.' },
    messages: {
      type: 'array',
      minItems: 1,
      description:
        'The last must be a user message: the input (`{prompt}` for a prompt agent, else the input as JSON ' +
        'text). Earlier user and assistant messages are its history; system messages are ignored.',
      items: {
        type: 'object',
        properties: {
          role: { type: 'string' },
          content: { type: ['string', 'array', 'null'] },
        },
        required: ['role'],
      },
    },
    stream: { type: ['boolean', 'null'] },
    stream_options: {
      type: ['object', 'null'],
      properties: { include_usage: { type: 'boolean' } },
    },
  },
  required: ['model', 'messages'],
};
