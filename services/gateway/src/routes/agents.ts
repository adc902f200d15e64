import { InvocationView, type JsonSchema, MeshError, SESSION_ID_PATTERN } from '@agentmesh/shared';
import type { Multitask } from '@agentmesh/shared/redis';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import {
  IDEMPOTENCY_KEY_TEXT,
  IdempotencyKeyHeader,
  idempotencyKeyOf,
} from '../invocations/idempotency-key.js';
import { InvocationService } from '../invocations/invocation-service.js';
import type { MeshState } from '../mesh-state.js';
import { nameList } from '../setup/name-list.js';
import { AgentListSchema, describeAgent } from './agent-description.js';
import { type InvokeStreamDeps, invokeStreaming } from './invoke-stream.js';
import { errorResponse, FORBIDDEN, namedResponse } from './responses.js';
import { runQueryOf, runQueryProperties } from './run-query.js';

/** Options of the agent routes. */
export interface AgentRoutesOptions {
  mesh: MeshState;
  invocations: InvocationService;
  defaultTimeoutSeconds: number;
  /** The largest `?timeout` (MESH_MAX_TIMEOUT_SECONDS). */
  maxTimeoutSeconds: number;
  /** What `?stream=true` needs. */
  stream: InvokeStreamDeps;
}

const NOT_PUBLISHED = errorResponse('`unavailable`: the tool catalogue has not been published yet.');
const NameParams = {
  type: 'object',
  properties: { name: { type: 'string', description: 'The name of an agent of this mesh.' } },
  required: ['name'],
};

/** The query of an invoke operation: `wait`, `timeout`, `budget`, a session's, and `stream`. */
function invokeQuery(defaultTimeoutSeconds: number, maxTimeoutSeconds: number): JsonSchema {
  return {
    type: 'object',
    properties: {
      ...runQueryProperties(defaultTimeoutSeconds, maxTimeoutSeconds),
      session: {
        type: 'string',
        pattern: SESSION_ID_PATTERN,
        description:
          "Continue the conversation of this session (created on first use): the agent's model sees its earlier exchanges.",
      },
      multitask: {
        type: 'string',
        enum: ['enqueue', 'reject', 'interrupt'],
        default: 'enqueue',
        description:
          'With `session`, while one of its invocations runs: run after it (`enqueue`), answer 409 `session_busy` (`reject`), or cancel it and run next (`interrupt`).',
      },
      stream: {
        type: 'boolean',
        description:
          "With `true`, answer 200 text/event-stream at once: a `status` event whose `data` is the InvocationView, then the tree's events with deltas, until the invocation's terminal status (`wait` does not apply). Refusals stay JSON. Default `false`.",
      },
    },
    additionalProperties: false,
  };
}

/** `GET /agents`, `GET /agents/{name}`, and one `POST /agents/<name>/invoke` per agent with its real schemas. */
export const agentRoutes: FastifyPluginAsync<AgentRoutesOptions> = async (app, opts) => {
  const { mesh, invocations } = opts;
  const ready = (): NonNullable<MeshState['plan']> => {
    const plan = mesh.plan;
    if (!plan) throw new MeshError('unavailable', 'The tool catalogue has not been published yet.');
    return plan;
  };

  // 403 for an agent outside the caller's API key scope (404 first for one that does not exist).
  const allow = (req: FastifyRequest, name: string) => {
    if (!req.meshCaller.mayUse(name))
      throw new MeshError('forbidden', `This API key may not use agent ${name}.`);
  };
  // The agents the caller may use, so a typo is one look away from the right name.
  const unknownAgent = (req: FastifyRequest, name: string) => {
    const known = Object.keys(mesh.config.agents).filter((a) => req.meshCaller.mayUse(a));
    return new MeshError('agent_not_found', `No agent is named ${name} (agents: ${nameList(known)}).`);
  };

  app.get(
    '/agents',
    {
      schema: {
        tags: ['agents'],
        operationId: 'listAgents',
        summary: 'List the agents (those of the API key scope)',
        response: {
          200: { 'x-response-description': 'The agents the caller may use.', ...AgentListSchema },
          503: NOT_PUBLISHED,
        },
      },
    },
    async (req) => ({
      agents: Object.values(ready().agents)
        .filter((a) => req.meshCaller.mayUse(a.name))
        .map(describeAgent),
    }),
  );

  app.get<{ Params: { name: string } }>(
    '/agents/:name',
    {
      schema: {
        tags: ['agents'],
        operationId: 'getAgent',
        summary: 'Describe one agent, with the callables its model receives',
        params: NameParams,
        response: {
          200: namedResponse('AgentDescription', 'The agent.'),
          403: FORBIDDEN,
          404: errorResponse(
            '`agent_not_found`: no agent has this name; the message lists those you may use.',
          ),
          503: NOT_PUBLISHED,
        },
      },
    },
    async (req) => {
      const agents = ready().agents;
      // An own property only: `constructor` or `__proto__` is no agent.
      const agent = Object.hasOwn(agents, req.params.name) ? agents[req.params.name] : undefined;
      if (!agent) throw unknownAgent(req, req.params.name);
      allow(req, agent.name);
      return describeAgent(agent);
    },
  );

  const invoke = async (name: string, req: FastifyRequest, reply: FastifyReply) => {
    const agent = ready().agents[name];
    if (!agent) throw unknownAgent(req, name);
    // Validated by the query schema: numbers within their bounds (docs/reference/bounds.md: a deadline past
    // MESH_MAX_TIMEOUT_SECONDS is refused before anything is written).
    const query = req.query as {
      wait?: number;
      timeout?: number;
      budget?: number;
      session?: string;
      multitask?: Multitask;
      stream?: boolean;
    };
    const run = runQueryOf(query, opts.defaultTimeoutSeconds);
    const idempotencyKey = idempotencyKeyOf(req.headers);
    const abort = new AbortController();
    // The request stream closes once its body is read; the response closing before it was sent
    // means the client went away, and its wait ends (the invocation goes on).
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const traceparent = req.headers.traceparent;
    const options = {
      timeoutMs: run.timeoutMs,
      waitMs: run.waitMs,
      untilDecision: true,
      traceparent: typeof traceparent === 'string' ? traceparent : undefined,
      signal: abort.signal,
      owner: req.meshCaller.owner,
      idempotencyKey,
      budget: run.budget,
      session: query.session ? { id: query.session, multitask: query.multitask ?? 'enqueue' } : undefined,
    };
    if (query.stream === true)
      return invokeStreaming(opts.stream, invocations, agent, req.body, options, req, reply);
    const view = await invocations.start(agent, req.body, options);
    if (InvocationService.finished(view)) return reply.status(200).send(view);
    return reply.status(202).header('location', `/invocations/${view.id}`).send(view);
  };

  const querystring = invokeQuery(opts.defaultTimeoutSeconds, opts.maxTimeoutSeconds);
  for (const [name, schemas] of opts.mesh.schemas) {
    const view = viewSchema(name, schemas.output);
    app.post(
      `/agents/${name}/invoke`,
      {
        schema: {
          tags: ['agents'],
          operationId: `invoke_${name}`,
          summary: `Invoke ${name}`,
          description: `${mesh.config.agents[name]?.description ?? ''}\n\n${IDEMPOTENCY_KEY_TEXT}`.trim(),
          querystring,
          headers: { type: 'object', properties: { 'Idempotency-Key': IdempotencyKeyHeader } },
          ...(schemas.input ? { body: schemas.input } : {}),
          response: {
            200: {
              description:
                'The invocation ended within `wait` (JSON); with `stream=true`, a text/event-stream: per event `id:`, `event:` and `data:` (a MeshEvent; the first a `status` event whose `data` is the InvocationView).',
              content: {
                'application/json': { schema: view },
                'text/event-stream': { schema: { $ref: 'MeshEvent#' } },
              },
            },
            202: {
              ...view,
              'x-response-description':
                'Still running after `wait`: follow `Location` (GET /invocations/{id}).',
              headers: { Location: { type: 'string', description: '/invocations/{id}' } },
            },
            400: errorResponse(
              '`invalid_input` (the body, query or Idempotency-Key; `details[].path` names each problem) or `invalid_json`.',
            ),
            429: errorResponse(
              '`too_many_streams` (with `stream=true`): this API key, or the gateway, has as many streams open as allowed.',
            ),
            403: FORBIDDEN,
            404: errorResponse('`session_not_found`: another API key created the session.'),
            409: errorResponse(
              '`session_conflict` (the session belongs to another agent) or `session_busy` (one of its invocations runs and `multitask=reject`).',
            ),
            413: errorResponse('`payload_too_large`: the body is over the limit (1 MiB by default).'),
            415: errorResponse('`unsupported_media_type`: only application/json bodies are accepted.'),
            422: errorResponse(
              '`idempotency_key_reused`: the Idempotency-Key came before with another body.',
            ),
            503: errorResponse('`unavailable`: Redis is unreachable or the catalogue is not published yet.'),
          },
        },
        // Before the body is read: an agent outside the key's scope is 403 whatever the body.
        onRequest: async (req) => allow(req, name),
        // Before the schema runs: no body is bad JSON for every agent, also one without input schema.
        preValidation: async (req) => {
          if (req.body === undefined)
            throw new MeshError('invalid_json', "The request body is empty: send the agent's input as JSON.");
        },
      },
      (req, reply) => invoke(name, req, reply),
    );
  }
  // Any other name; other methods on an invoke path are 405 with `Allow: POST` (error-handler.ts).
  app.post<{ Params: { name: string } }>('/agents/:name/invoke', { schema: { hide: true } }, async (req) => {
    throw unknownAgent(req, req.params.name);
  });
};

/** The InvocationView schema with `output` replaced by the agent's own output schema. */
function viewSchema(agent: string, output: JsonSchema | null): JsonSchema {
  const base = JSON.parse(JSON.stringify(InvocationView)) as JsonSchema & {
    properties: Record<string, unknown>;
  };
  base.title = `InvocationView of ${agent}`;
  base.properties.output = output ?? { description: 'The final answer text.', type: 'string' };
  return base;
}

/** Names for a message, cut after 20; `none` when there are none. */
