import { createHash } from 'node:crypto';

/**
 * Every Redis key and queue name of agentmesh, built here and nowhere else (docs/reference/redis-layout.md).
 * Invocation keys carry the ROOT invocation's hash tag, so a whole tree lives in one cluster
 * slot and a Lua step may touch a parent and its child at once. BullMQ queues share one
 * hash-tagged prefix, so flows across agent queues stay in one slot too.
 */
export interface KeyLayout {
  /** The prefix everything starts with (`MESH_PREFIX`, default `mesh`). */
  readonly prefix: string;
  /** BullMQ's `prefix` option: one hash tag for every queue. */
  readonly bullPrefix: string;
  /** Hash: an invocation's state (status, input, output, epoch, usage…). */
  invocation(rootId: string, id: string): string;
  /** Hash: an invocation's call records, field = call id, value = CallRecord JSON. */
  calls(rootId: string, id: string): string;
  /** Hash: an invocation's memory (`ctx.memory`), field = key. */
  memory(rootId: string, id: string): string;
  /**
   * Hash: a tree's texts past EVENT_INLINE_BYTES, each stored once (field = its SHA-256, value =
   * the text); states and records refer to them (store/tree-texts.ts). Lives as long as the
   * longest-lived of the tree's keys: FINISH extends it.
   */
  texts(rootId: string): string;
  /** Stream: the event log of a whole invocation tree. */
  events(rootId: string): string;
  /**
   * Stream: a tree's delta events (model text as it is written), kept apart from `events` so
   * trimming deltas never drops a structural event; trimmed to 10,000 entries and expiring
   * `MESH_DELTA_RETENTION_SECONDS` after its last write.
   */
  deltas(rootId: string): string;
  /** String with TTL: present while someone watches the tree's deltas; runners publish none without it. */
  watch(rootId: string): string;
  /** Sorted set: ids of recent root invocations, score = createdAt, for listing. */
  recent(): string;
  /** String: the invocation an Idempotency-Key (hashed with agent and API key) started. */
  idempotency(scope: string): string;
  /**
   * String with TTL: an agent's definition (its plan entry as canonical JSON) by its definition
   * hash, so a fork refused with `plan_changed` can name what changed since the original ran.
   */
  definition(hash: string): string;
  /** Hash: the tool-host's catalogue (`version`, `tools` JSON). */
  catalogue(): string;
  /** Channel: the catalogue changed. */
  catalogueChannel(): string;
  /**
   * Sorted set per API key (owner hash; `anyone` with auth off): its pending approvals across
   * trees, member = `<invocationId> <callId>`, score = requestedAt (ms). Its own hash tag: a read
   * verifies each entry against its tree (GET /approvals).
   */
  approvalIndex(owner: string | undefined): string;
  /** Sorted set per agent: live runners, score = heartbeat expiry (ms). */
  agentRunners(agent: string): string;
  /** Sorted set: every live runner of the mesh, score = heartbeat expiry (ms); the gone-runner watch reads it. */
  runners(): string;
  /** Hash with TTL: the runner that watches for runners whose connections closed (`holder`), and when it renewed. */
  goneRunnerLease(): string;
  /** Channel: a root invocation reached a terminal state (message = invocation id). */
  doneChannel(): string;
  /** Channel: cancel an invocation subtree (message = invocation id). */
  cancelChannel(): string;
  /** Channel: an MCP client cancelled a tools/call (message = the call's scope hash, mcp/mcp-calls.ts). */
  mcpCancelChannel(): string;
  /** Hash with TTL: a tool call's record for an Idempotency-Key (`tool`, `args` hash, `outcome`). */
  toolOutcome(idempotencyKey: string): string;
  /** String with TTL: the lease of a tool call running under an Idempotency-Key (same slot). */
  toolLease(idempotencyKey: string): string;
  /** String with TTL: held by the runner sweeping for stuck parked parents. */
  watchdogLock(): string;
  /** Sorted set: in-flight calls per model entry, for `maxConcurrency`. */
  modelSlots(model: string): string;
  /** Hash with TTL: a session's binding (agent, owner), times and running invocation (docs/guides/sessions.md). */
  session(id: string): string;
  /** List with TTL: a session's invocation ids, oldest first (bounded). */
  sessionInvocations(id: string): string;
  /** List with TTL: a session's messages as JSON `{role, content, invocationId}`, oldest first (bounded). */
  sessionMessages(id: string): string;
  /** List with TTL: a session's invocations waiting for the running one, next first (bounded). */
  sessionQueue(id: string): string;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** A BullMQ queue name for an agent (BullMQ rejects `:` in names). */
export function queueName(agent: string): string {
  return `agent-${agent}`;
}

/** Builds the key layout under `prefix`. */
export function keyLayout(prefix = 'mesh'): KeyLayout {
  const tree = (rootId: string) => `${prefix}:{${rootId}}`;
  return {
    prefix,
    bullPrefix: `{${prefix}-q}`,
    invocation: (rootId, id) => `${tree(rootId)}:inv:${id}`,
    calls: (rootId, id) => `${tree(rootId)}:calls:${id}`,
    memory: (rootId, id) => `${tree(rootId)}:mem:${id}`,
    texts: (rootId) => `${tree(rootId)}:texts`,
    events: (rootId) => `${tree(rootId)}:events`,
    deltas: (rootId) => `${tree(rootId)}:deltas`,
    watch: (rootId) => `${tree(rootId)}:watch`,
    // Every key outside a tree carries its own hash tag (docs/guides/deploying.md), so on a cluster each lives in
    // one slot and a step on it never crosses slots; channels need none (pub/sub reaches every node).
    recent: () => `${prefix}:{recent}`,
    idempotency: (scope) => `${prefix}:{idem:${scope}}`,
    catalogue: () => `${prefix}:{catalogue}`,
    definition: (hash) => `${prefix}:{def:${hash}}`,
    catalogueChannel: () => `${prefix}:catalogue-changed`,
    agentRunners: (agent) => `${prefix}:{runners:${agent}}`,
    runners: () => `${prefix}:{runners}`,
    goneRunnerLease: () => `${prefix}:{gone-runner-lease}`,
    approvalIndex: (owner) => `${prefix}:{approvals:${owner ?? 'anyone'}}:pending`,
    doneChannel: () => `${prefix}:done`,
    cancelChannel: () => `${prefix}:cancel`,
    mcpCancelChannel: () => `${prefix}:mcp-cancel`,
    // One hash tag per Idempotency-Key (its sha256: bounded, any bytes): record and lease share a slot.
    toolOutcome: (key) => `${prefix}:{tool:${sha256(key)}}:outcome`,
    toolLease: (key) => `${prefix}:{tool:${sha256(key)}}:lease`,
    modelSlots: (model) => `${prefix}:{model-slots:${model}}`,
    watchdogLock: () => `${prefix}:{watchdog-lock}`,
    // One hash tag per session (its id matches SESSION_ID_PATTERN): its four keys change in one step.
    session: (id) => `${prefix}:{session:${id}}:meta`,
    sessionInvocations: (id) => `${prefix}:{session:${id}}:invocations`,
    sessionMessages: (id) => `${prefix}:{session:${id}}:messages`,
    sessionQueue: (id) => `${prefix}:{session:${id}}:queue`,
  };
}

/**
 * Not a key, a name under the prefix: the CLIENT SETNAME every connection of runner `id` bears, by
 * which the gone-runner watch tells a live runner (a client name holds no space or control byte).
 */
export function runnerClientName(keys: KeyLayout, id: string): string {
  return `${keys.prefix}:runner:${id}`.replace(/[^!-~]/g, '_');
}

/** The keys of a BullMQ queue the fast path's steps name (BullMQ's QueueKeys). */
export type BullQueueKey =
  | 'stalled'
  | 'wait'
  | 'active'
  | 'prioritized'
  | 'stalled-check'
  | 'meta'
  | 'paused'
  | 'marker'
  | 'events'
  | 'repeat';

/**
 * BullMQ's own keys, as BullMQ builds them (its queue-keys.ts), where the fast path's steps reach
 * them: a queue's under the queue's key, a job's under the job's key.
 */
export const bullKeys = {
  /** A key of the queue whose key is `queueKey` (`toKey('')`, ending in `:`). */
  queue: (queueKey: string, name: BullQueueKey) => `${queueKey}${name}`,
  /** String with TTL: a job's lock, its worker's token. */
  lock: (jobKey: string) => `${jobKey}:lock`,
  /** Set: a parent job's children that have not completed. */
  dependencies: (jobKey: string) => `${jobKey}:dependencies`,
};
