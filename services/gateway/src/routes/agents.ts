import { type AgentPlan, InvocationView, type JsonSchema, MeshError } from '@agentmesh/shared';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { InvocationService } from '../invocations/invocation-service.js';
import type { MeshState } from '../mesh-state.js';
import { IDEMPOTENCY_KEY_TEXT, idempotencyKeyOf } from './idempotency-key.js';

/** Options of the agent routes. */
export interface AgentRoutesOptions {
  mesh: MeshState;
  invocations: InvocationService;
  defaultTimeoutSeconds: number;
  /** The largest `?timeout` (MESH_MAX_TIMEOUT_SECONDS). */
  maxTimeoutSeconds: number;
}

const ErrorResponse = { $ref: 'ErrorBody#' };
const InvokeQuery = {
  type: 'object',
  properties: {
    wait: {
      type: 'string',
      pattern: '^\\d+(\\.\\d+)?$',
      description: 'Seconds to wait for a terminal state, 0–300 (default 30).',
    },
    timeout: {
      type: 'string',
      description: 'The invocation deadline in whole seconds, 1 to MESH_MAX_TIMEOUT_SECONDS (default 86400).',
    },
  },
  additionalProperties: false,
};

/** `GET /agents`, `GET /agents/{name}`, and one `POST /agents/<name>/invoke` per agent with its real schemas. */
export const agentRoutes: FastifyPluginAsync<AgentRoutesOptions> = async (app, opts) => {
  const { mesh, invocations } = opts;
  const ready = (): NonNullable<MeshState['plan']> => {
    const plan = mesh.plan;
    if (!plan) throw new MeshError('unavailable', 'The tool catalogue has not been published yet.');
    return plan;
  };
  const describe = (a: AgentPlan) => ({
    name: a.name,
    description: a.description,
    input: a.inputSchema,
    output: a.outputSchema,
    tools: a.tools,
    subagents: a.subagents,
    callables: a.callables,
  });

  // 403 for an agent outside the caller's API key scope (404 first for one that does not exist).
  const allow = (req: FastifyRequest, name: string) => {
    if (!req.meshCaller.mayUse(name))
      throw new MeshError('forbidden', `This API key may not use agent ${name}.`);
  };

  app.get(
    '/agents',
    { schema: { tags: ['agents'], summary: 'List the agents (those of the API key scope)' } },
    async (req) => ({
      agents: Object.values(ready().agents)
        .filter((a) => req.meshCaller.mayUse(a.name))
        .map(describe),
    }),
  );

  app.get<{ Params: { name: string } }>(
    '/agents/:name',
    { schema: { tags: ['agents'], summary: 'Describe one agent, with the callables its model receives' } },
    async (req) => {
      const agents = ready().agents;
      // An own property only: `constructor` or `__proto__` is no agent.
      const agent = Object.hasOwn(agents, req.params.name) ? agents[req.params.name] : undefined;
      if (!agent) throw new MeshError('agent_not_found', `No agent is named ${req.params.name}.`);
      allow(req, agent.name);
      return describe(agent);
    },
  );

  const invoke = async (name: string, req: FastifyRequest, reply: FastifyReply) => {
    const agent = ready().agents[name];
    if (!agent) throw new MeshError('agent_not_found', `No agent is named ${name}.`);
    const query = req.query as { wait?: string; timeout?: string };
    const wait = seconds(query.wait, 30, 300, 'wait');
    // Checked before anything is written: a deadline past MESH_MAX_TIMEOUT_SECONDS is refused (§16).
    const timeout = query.timeout === undefined ? opts.defaultTimeoutSeconds : Number(query.timeout);
    if (!/^[0-9]{1,16}$/.test(query.timeout ?? '1') || timeout < 1 || timeout > opts.maxTimeoutSeconds)
      throw badQuery('timeout', `must be a whole number of seconds between 1 and ${opts.maxTimeoutSeconds}`);
    const idempotencyKey = idempotencyKeyOf(req.headers);
    const abort = new AbortController();
    // The request stream closes once its body is read; the response closing before it was sent
    // means the client went away, and its wait ends (the invocation goes on).
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) abort.abort();
    });
    const traceparent = req.headers.traceparent;
    const view = await invocations.start(agent, req.body, {
      timeoutMs: timeout * 1000,
      waitMs: wait * 1000,
      traceparent: typeof traceparent === 'string' ? traceparent : undefined,
      signal: abort.signal,
      owner: req.meshCaller.owner,
      idempotencyKey,
    });
    if (InvocationService.finished(view)) return reply.status(200).send(view);
    return reply.status(202).header('location', `/invocations/${view.id}`).send(view);
  };

  for (const [name, schemas] of opts.mesh.schemas) {
    const view = viewSchema(schemas.output);
    app.post(
      `/agents/${name}/invoke`,
      {
        schema: {
          tags: ['agents'],
          operationId: `invoke_${name}`,
          summary: `Invoke ${name}`,
          description: `${mesh.config.agents[name]?.description ?? ''}\n\n${IDEMPOTENCY_KEY_TEXT}`.trim(),
          querystring: InvokeQuery,
          ...(schemas.input ? { body: schemas.input } : {}),
          response: {
            200: view,
            202: view,
            ...Object.fromEntries([400, 401, 403, 404, 413, 415, 422, 503].map((s) => [s, ErrorResponse])),
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
  app.post<{ Params: { name: string } }>('/agents/:name/invoke', { schema: { hide: true } }, async (req) => {
    throw new MeshError('agent_not_found', `No agent is named ${req.params.name}.`);
  });
  // An invoke path answers only POST: any other method is 405 with `Allow: POST`.
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url: '/agents/:name/invoke',
    schema: { hide: true },
    handler: async (req, reply) => {
      reply.header('allow', 'POST');
      throw new MeshError('method_not_allowed', `${req.method} is not allowed here; invoke with POST.`);
    },
  });
};

/** The InvocationView schema with `output` replaced by the agent's own output schema. */
function viewSchema(output: JsonSchema | null): JsonSchema {
  const base = JSON.parse(JSON.stringify(InvocationView)) as JsonSchema & {
    properties: Record<string, unknown>;
  };
  base.properties.output = output ?? { description: 'The final answer text.', type: 'string' };
  return base;
}

function seconds(raw: string | undefined, fallback: number, max: number, name: string): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > max)
    throw badQuery(name, `must be a number of seconds between 0 and ${max}`);
  return n;
}

function badQuery(name: string, message: string): MeshError {
  return new MeshError('invalid_input', `Invalid querystring: ${name} ${message}`, [
    { path: `/${name}`, message },
  ]);
}
