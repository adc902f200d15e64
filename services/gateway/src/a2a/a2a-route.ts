import { type AgentPlan, type KeyLayout, MeshError } from '@agentmesh/shared';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { type Caller, NOBODY } from '../auth/caller.js';
import type { EventHub } from '../events/event-hub.js';
import type { StreamSlots } from '../events/stream-slots.js';
import type { TreeStreams } from '../events/tree-streams.js';
import type { WatchKeeper } from '../events/watch-keeper.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import type { MeshState } from '../mesh-state.js';
import { nameList } from '../setup/name-list.js';
import { A2A_CARD_SCHEMA, A2A_RPC_SCHEMA } from './a2a-schema.js';

/** Options of the A2A routes. */
export interface A2aRoutesOptions {
  mesh: MeshState;
  invocations: InvocationService;
  hub: EventHub;
  keys: KeyLayout;
  /** The gateway's open streams: a streaming answer takes one, as an event stream does. */
  slots: StreamSlots;
  /** A streaming answer follows the root's text through these (docs/guides/streaming.md#a2a). */
  streams: TreeStreams;
  watches: WatchKeeper;
  /**
   * The end of every response still streaming a tree (TreeStreaming's `open`): closing the gateway
   * ends each request's following, so a streaming answer ends and a blocking one answers the task
   * as it stands rather than holding the shutdown until its invocation ends.
   */
  open: Set<() => void>;
  /** MESH_API_KEYS is set: the card declares the bearer scheme. */
  auth: boolean;
  /** The base URL clients reach the gateway at (MESH_PUBLIC_URL); else the request's own origin. */
  publicUrl: string | undefined;
  defaultTimeoutSeconds: number;
}

/**
 * The answers, on the A2A SDK, loaded with the first A2A request: the SDK and jose, which it
 * imports, cost each process that loads them about 0.1 s of CPU and 10 MiB at start, which a
 * gateway no A2A client calls never needs to pay.
 */
let answers: Promise<typeof import('./a2a-answers.js')> | undefined;
const loadAnswers = () => (answers ??= import('./a2a-answers.js'));

/**
 * Each agent over A2A (docs/guides/a2a-and-remote-agents.md, the SDK's JSON-RPC transport, A2A v1.0): its public agent card
 * at `GET /a2a/{agent}/.well-known/agent-card.json`, and `POST /a2a/{agent}` for SendMessage,
 * SendStreamingMessage, GetTask, CancelTask and SubscribeToTask, with the gateway's auth. Tasks are
 * invocations, read from Redis, so any gateway answers any task.
 */
export const a2aRoutes: FastifyPluginAsync<A2aRoutesOptions> = async (app, opts) => {
  // An unknown name lists the agents the caller may use, as REST's 404 does; the public card
  // route under auth has no caller to list them for, and says where the list is.
  const agentNamed = (name: string, caller: Caller): AgentPlan => {
    const plan = opts.mesh.plan;
    if (!plan) throw new MeshError('unavailable', 'The tool catalogue has not been published yet.');
    const agent = Object.hasOwn(plan.agents, name) ? plan.agents[name] : undefined;
    if (agent) return agent;
    const known = Object.keys(plan.agents).filter((a) => caller.mayUse(a));
    const where = caller === NOBODY ? 'GET /agents with an API key lists them' : `agents: ${nameList(known)}`;
    throw new MeshError('agent_not_found', `No agent is named ${name} (${where}).`);
  };
  const baseUrl = (req: FastifyRequest): string =>
    opts.publicUrl
      ? opts.publicUrl.replace(/\/$/, '')
      : `${req.protocol}://${req.headers.host ?? 'localhost'}`;

  app.get<{ Params: { agent: string } }>(
    '/a2a/:agent/.well-known/agent-card.json',
    { schema: A2A_CARD_SCHEMA },
    async (req) => {
      const agent = agentNamed(req.params.agent, req.meshCaller);
      return (await loadAnswers()).cardJson(agent, baseUrl(req), opts.auth);
    },
  );

  app.post<{ Params: { agent: string } }>('/a2a/:agent', { schema: A2A_RPC_SCHEMA }, async (req, reply) => {
    const agent = agentNamed(req.params.agent, req.meshCaller);
    if (!req.meshCaller.mayUse(agent.name))
      throw new MeshError('forbidden', `This API key may not use agent ${agent.name}.`);
    await (await loadAnswers()).answerRpc(req, reply, agent, baseUrl(req), opts);
  });
};
