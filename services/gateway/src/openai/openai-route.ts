import { type AgentPlan, isTerminal, MeshError } from '@agentmesh/shared';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import type { StreamSlots } from '../events/stream-slots.js';
import type { WatchKeeper } from '../events/watch-keeper.js';
import { IdempotencyKeyHeader, idempotencyKeyOf } from '../invocations/idempotency-key.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import type { MeshState } from '../mesh-state.js';
import { AllowedMethods } from '../setup/allowed-methods.js';
import { nameList } from '../setup/name-list.js';
import { type ChatMessageIn, chatInput } from './chat-input.js';
import { chatCompletion } from './completion.js';
import { openAiError, toOpenAiErrors } from './openai-error.js';
import { ChatCompletionRequest, openAiErrorResponse } from './openai-schema.js';
import { failure, streamCompletion } from './stream-completion.js';
import type { TreeSource } from './tree-source.js';

/** Options of the OpenAI-compatible routes (registered with prefix `/v1`). */
export interface OpenAiRoutesOptions {
  mesh: MeshState;
  invocations: InvocationService;
  slots: StreamSlots;
  /** Keeps a streamed completion's tree watched, so its runners publish deltas. */
  watches: WatchKeeper;
  /** Where a streamed completion reads its tree's events (structural and deltas). */
  source: TreeSource;
  /** The invocation's deadline (MESH_DEFAULT_TIMEOUT_SECONDS). */
  defaultTimeoutSeconds: number;
  /** How often an idle stream sends a comment (default 15 s). */
  heartbeatMs?: number;
  /**
   * The end of every response still streaming a tree (TreeStreaming's `open`): closing the gateway
   * ends the open streamed completions (each tells its client why) in its `preClose`.
   */
  open: Set<() => void>;
}

interface ChatBody {
  model: string;
  messages: ChatMessageIn[];
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean } | null;
}

// A non-streamed completion waits for the end; the runners end it at its deadline, this soon after.
const DEADLINE_GRACE_MS = 10_000;

const TAGS = ['openai-compatible'];
const CHAT_IDEMPOTENCY_KEY = {
  ...IdempotencyKeyHeader,
  description:
    'Header `Idempotency-Key` (optional): the same key for the same model (agent) with the same API key answers ' +
    'the same invocation, and so the same completion, never a second run; with another input or history it ' +
    'answers 422 `idempotency_key_reused`. Keys are kept for MESH_RETENTION_SECONDS; 1 to 255 printable ASCII characters.',
};
const NOT_PUBLISHED = openAiErrorResponse('`unavailable`: the tool catalogue has not been published yet.');
const FORBIDDEN = openAiErrorResponse('`forbidden`: this API key may not use the agent.');
const NOT_FOUND = openAiErrorResponse(
  '`agent_not_found`: no agent has this name; the message lists those you may use.',
);

/**
 * The agents as OpenAI-compatible models (docs/guides/openai-compatible.md): `GET /v1/models`,
 * `GET /v1/models/{model}`, `POST /v1/chat/completions`, with the gateway's auth, scopes and
 * bounds. Every error under /v1 is in OpenAI's shape with the mesh's code.
 */
export const openAiRoutes: FastifyPluginAsync<OpenAiRoutesOptions> = async (app, opts) => {
  const { mesh, invocations } = opts;
  // When this gateway started: the `created` of every model.
  const created = Math.floor(Date.now() / 1000);
  app.addHook('onSend', toOpenAiErrors);
  installNotFound(app);

  const ready = () => {
    const plan = mesh.plan;
    if (!plan) throw new MeshError('unavailable', 'The tool catalogue has not been published yet.');
    return plan;
  };
  // As REST's agent routes: 404 (naming the agents the caller may use) first, then 403 for one
  // outside the API key's scope.
  const agentFor = (req: FastifyRequest, name: string): AgentPlan => {
    const agents = ready().agents;
    const agent = Object.hasOwn(agents, name) ? agents[name] : undefined;
    if (!agent) {
      const known = Object.keys(agents).filter((a) => req.meshCaller.mayUse(a));
      throw new MeshError('agent_not_found', `No agent is named ${name} (agents: ${nameList(known)}).`);
    }
    if (!req.meshCaller.mayUse(name))
      throw new MeshError('forbidden', `This API key may not use agent ${name}.`);
    return agent;
  };
  const model = (name: string) => ({
    id: name,
    object: 'model' as const,
    created,
    owned_by: 'agentmesh' as const,
  });

  app.get(
    '/models',
    {
      schema: {
        tags: TAGS,
        operationId: 'listModels',
        summary: 'List the agents the caller may use, as OpenAI models',
        response: {
          200: {
            'x-response-description': 'The agents of the API key scope; `id` is the agent name.',
            type: 'object',
            properties: {
              object: { type: 'string', enum: ['list'] },
              data: { type: 'array', items: { $ref: 'Model#' } },
            },
            required: ['object', 'data'],
          },
          503: NOT_PUBLISHED,
        },
      },
    },
    async (req) => ({
      object: 'list',
      data: Object.keys(ready().agents)
        .filter((name) => req.meshCaller.mayUse(name))
        .map(model),
    }),
  );

  app.get<{ Params: { model: string } }>(
    '/models/:model',
    {
      schema: {
        tags: TAGS,
        operationId: 'getModel',
        summary: 'One agent, as an OpenAI model',
        params: {
          type: 'object',
          properties: { model: { type: 'string', description: 'The name of an agent of this mesh.' } },
          required: ['model'],
        },
        response: {
          200: { description: 'The agent as a model.', $ref: 'Model#' },
          403: FORBIDDEN,
          404: NOT_FOUND,
          503: NOT_PUBLISHED,
        },
      },
    },
    async (req) => model(agentFor(req, req.params.model).name),
  );

  app.post(
    '/chat/completions',
    {
      schema: {
        tags: TAGS,
        operationId: 'createChatCompletion',
        summary: 'Invoke an agent as an OpenAI chat model',
        description:
          '`model` names the agent; the last message (a user message) is its input, earlier user and ' +
          "assistant messages its history; the client's system messages are ignored. Without `stream`, " +
          'one `chat.completion` whose content is the output; with it, Server-Sent `chat.completion.chunk` ' +
          "events of the text as the agent writes it, then `data: [DONE]`. Usage is the whole tree's.",
        body: ChatCompletionRequest,
        headers: { type: 'object', properties: { 'Idempotency-Key': CHAT_IDEMPOTENCY_KEY } },
        response: {
          200: {
            description:
              'The completion (`application/json`), or with `stream: true` its chunks (`text/event-stream`).',
            content: {
              'application/json': { schema: { $ref: 'ChatCompletion#' } },
              'text/event-stream': { schema: { $ref: 'ChatCompletionChunk#' } },
            },
          },
          400: openAiErrorResponse(
            '`invalid_input` (the body, a last message that is not a user message with the input, or the Idempotency-Key) or `invalid_json`.',
          ),
          403: FORBIDDEN,
          404: NOT_FOUND,
          409: openAiErrorResponse('`cancelled`: the invocation was cancelled.'),
          413: openAiErrorResponse('`payload_too_large`: the body is over the limit (1 MiB by default).'),
          415: openAiErrorResponse('`unsupported_media_type`: only application/json bodies are accepted.'),
          422: openAiErrorResponse(
            "`idempotency_key_reused` (the Idempotency-Key came before with another input or history), or the agent's invocation failed with the mesh's code (`budget_exceeded`, `max_iterations_exceeded`, `invalid_output`…).",
          ),
          429: openAiErrorResponse(
            '`too_many_streams` (with `stream: true`): as many streams are open as allowed.',
          ),
          500: openAiErrorResponse(
            "The agent's invocation failed with the mesh's code (`too_many_recoveries`…).",
          ),
          502: openAiErrorResponse(
            "The agent's invocation failed with the mesh's code (`model_error`, `subagent_failed`, `tool_failed`…).",
          ),
          503: openAiErrorResponse('`unavailable` (Redis, the catalogue) or `model_unavailable`.'),
          504: openAiErrorResponse(
            '`deadline_exceeded` or `tool_timeout`: the invocation ran past its deadline.',
          ),
        },
      },
    },
    async (req, reply) => {
      const body = req.body as ChatBody;
      const agent = agentFor(req, body.model);
      const chat = chatInput(agent, body.messages);
      const timeoutMs = opts.defaultTimeoutSeconds * 1000;
      const traceparent = typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined;
      const owner = req.meshCaller.owner;
      // As invoke's (docs/reference/rest-api.md): a repeated key answers the invocation it started.
      const idempotencyKey = idempotencyKeyOf(req.headers);
      if (body.stream === true) {
        const deps = { ...opts, heartbeatMs: opts.heartbeatMs ?? 15_000 };
        const includeUsage = body.stream_options?.include_usage === true;
        return streamCompletion(deps, req, reply, agent, chat, {
          timeoutMs,
          owner,
          traceparent,
          idempotencyKey,
          includeUsage,
        });
      }
      // The client going away ends the wait; the invocation goes on, as an invoke's does.
      const abort = new AbortController();
      reply.raw.on('close', () => {
        if (!reply.raw.writableFinished) abort.abort();
      });
      const view = await invocations.start(agent, chat.input, {
        timeoutMs,
        waitMs: timeoutMs + DEADLINE_GRACE_MS,
        signal: abort.signal,
        owner,
        traceparent,
        idempotencyKey,
        history: chat.history,
      });
      if (view.status === 'succeeded') return chatCompletion(view);
      const { status, body: error } = failure(view);
      if (!isTerminal(view.status))
        req.log.warn({ invocationId: view.id }, 'chat completion past its deadline');
      return reply.status(status as 500).send(error);
    },
  );
};

/**
 * Any other path under /v1 is 404 `not_found`, and a known one asked with another method 405
 * `method_not_allowed` with `Allow`, as elsewhere, in OpenAI's shape.
 */
function installNotFound(app: Parameters<FastifyPluginAsync>[0]): void {
  const allowed = new AllowedMethods();
  app.addHook('onRoute', (route) => allowed.add(route.method, route.url));
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0] ?? '/';
    const methods = allowed.on(path);
    if (methods.length > 0 && !methods.includes(req.method)) {
      const message = `${req.method} is not allowed on ${path}; it answers ${methods.join(', ')}.`;
      return reply
        .status(405)
        .header('allow', methods.join(', '))
        .send(openAiError('method_not_allowed', message, 405));
    }
    return reply.status(404).send(openAiError('not_found', `Route ${req.method} ${path} not found.`, 404));
  });
}
