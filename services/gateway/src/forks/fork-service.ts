import {
  type AgentPlan,
  approvalField,
  type CallRecord,
  callerTraceparent,
  compileSchema,
  decisionField,
  describePlanChange,
  describeValidation,
  encodeNewInvocation,
  type ForkRecords,
  type ForkRequest,
  forkEvents,
  type InvocationState,
  type InvocationView,
  isTerminal,
  type KeyLayout,
  MeshError,
  type MeshPlan,
  newRootId,
  planFork,
  readOutputJson,
  storedRecord,
  type TreeTexts,
  textArgs,
} from '@agentmesh/shared';
import { isRedisCluster, type MeshRedis, type MeshScripts } from '@agentmesh/shared/redis';
import type { Caller } from '../auth/caller.js';
import { type IdempotencyEntry, IdempotencyStore } from '../invocations/idempotency-store.js';
import { CLAIM_GRACE_MS, type InvocationService } from '../invocations/invocation-service.js';
import { budgetOf, type StartOptions } from '../invocations/start-options.js';
import { type ForkBounds, readForkSource } from './read-fork-source.js';

/** The limits a fork is made under (docs/reference/bounds.md). */
export interface ForkLimits extends ForkBounds {
  /** MESH_MAX_RESULT_BYTES: a given result reaches the model cut as any result would be. */
  maxResultBytes: number;
}

/** How a fork is started: as a root invocation (`?wait`, `?timeout`, `?budget`, Idempotency-Key), no session. */
export type ForkOptions = Omit<StartOptions, 'session'> & { caller: Caller };

/** A fork ready to be written: the node it comes from, its agent and input, its records. */
interface PreparedFork {
  source: InvocationState;
  fromCallId: string;
  agent: AgentPlan;
  input: unknown;
  records: ForkRecords;
}

/**
 * `POST /invocations/{id}/fork` (docs/guides/durability.md): a new root invocation of a node's agent that reuses
 * the node's recorded calls before a call and runs live from there. The node is read once and
 * never written; the fork's records are copies of exactly the calls it reuses.
 */
export class ForkService {
  private readonly idempotency: IdempotencyStore;

  constructor(
    private readonly redis: MeshRedis,
    private readonly scripts: MeshScripts,
    private readonly keys: KeyLayout,
    private readonly invocations: InvocationService,
    private readonly plan: () => MeshPlan | undefined,
    private readonly limits: ForkLimits,
    private readonly retentionSeconds: number,
  ) {
    this.idempotency = new IdempotencyStore(redis, keys, retentionSeconds);
  }

  /** Starts the fork (or answers the one the same Idempotency-Key started) and waits like invoke. */
  async fork(sourceId: string, body: ForkRequest, options: ForkOptions): Promise<InvocationView> {
    const opts = { ...options, traceparent: callerTraceparent(options.traceparent) };
    const key = opts.idempotencyKey === undefined ? undefined : this.keyOf(sourceId, body, opts);
    // A repeat answers the fork its key made, without reading the node again.
    const held = key && (await this.idempotency.peek(key.scope));
    if (held) return this.rejoinHeld(held, key, sourceId, body, opts);
    const fork = await this.prepare(sourceId, body, opts.caller);
    const fresh = newRootId();
    const id = key ? await this.claim(key, fresh) : fresh;
    const create = () => this.create(fork, id, opts);
    return this.invocations.launch(
      id,
      id === fresh ? () => create().then(() => false) : () => this.rejoin(id, create, opts),
      opts,
    );
  }

  /** The fork a repeated key names (422 for another body), created here if its first request died. */
  private rejoinHeld(
    held: IdempotencyEntry,
    key: { bodyHash: string },
    sourceId: string,
    body: ForkRequest,
    opts: ForkOptions,
  ): Promise<InvocationView> {
    if (held.bodyHash !== key.bodyHash) throw new MeshError('idempotency_key_reused');
    const id = held.invocationId;
    const create = async () => this.create(await this.prepare(sourceId, body, opts.caller), id, opts);
    return this.invocations.launch(id, () => this.rejoin(id, create, opts), opts);
  }

  /** Reads and checks the node, its plan, the point and the input: every refusal before anything is written. */
  private async prepare(sourceId: string, body: ForkRequest, caller: Caller): Promise<PreparedFork> {
    const found = await readForkSource(this.scripts, this.keys, sourceId, this.limits);
    // As GET answers: another key's invocation does not exist for this caller.
    if (!found || !caller.sees(found.state.owner))
      throw new MeshError('invocation_not_found', `No invocation has id ${sourceId}.`);
    const source = found.state;
    if (!caller.mayUse(source.agent))
      throw new MeshError('forbidden', `This API key may not use agent ${source.agent}.`);
    const plan = this.plan();
    if (!plan) throw new MeshError('unavailable', 'The tool catalogue has not been published yet.');
    const agent = Object.hasOwn(plan.agents, source.agent) ? plan.agents[source.agent] : undefined;
    const code = agent?.kind === 'code';
    const records = planFork(
      found.records(),
      {
        fromCallId: body.fromCallId,
        ...(Object.hasOwn(body, 'result') ? { result: { value: body.result } } : {}),
      },
      { code, now: new Date().toISOString(), maxResultBytes: this.limits.maxResultBytes },
    );
    if (!agent) {
      throw new MeshError(
        'plan_changed',
        `Agent ${source.agent} no longer exists, so its invocation cannot be forked.`,
      );
    }
    if (agent.definitionHash !== source.defHash) throw await this.planChanged(source, agent);
    const input = Object.hasOwn(body, 'input') ? checkedInput(agent, body.input) : source.input;
    if (code) await this.addChildOutputs(records.reused);
    return { source, fromCallId: body.fromCallId, agent, input, records };
  }

  /** `plan_changed`, naming what changed when the definition the node ran with is still known. */
  private async planChanged(source: InvocationState, agent: AgentPlan): Promise<MeshError> {
    const stored = await this.redis.get(this.keys.definition(source.defHash)).catch(() => null);
    let before: Record<string, unknown> | undefined;
    try {
      before = stored === null ? undefined : (JSON.parse(stored) as Record<string, unknown>);
    } catch {
      before = undefined;
    }
    return new MeshError('plan_changed', describePlanChange(before, agent));
  }

  /**
   * A code agent's reused delegations carry their child's output (`ctx.subagent` returns it): the
   * child belongs to the original tree, which may expire before the fork replays. Read at once (a
   * large one from its tree's texts); a child gone already leaves nothing to reuse.
   */
  private async addChildOutputs(reused: CallRecord[]): Promise<void> {
    const missing = reused.filter(
      (r) => r.kind === 'subagent' && r.status === 'succeeded' && r.childId && r.outputJson === undefined,
    );
    if (missing.length === 0) return;
    const outputs = await Promise.all(missing.map((r) => readOutputJson(this.redis, this.keys, r.childId!)));
    missing.forEach((r, i) => {
      const output = outputs[i];
      if (output === undefined) {
        throw new MeshError(
          'call_not_recorded',
          `Call ${r.callId} (subagent ${r.name}) has no output to reuse: its child invocation ${r.childId} is gone.`,
        );
      }
      r.outputJson = output;
    });
  }

  /**
   * Writes the fork (CREATE_FORK: state, reused records, first events, one step on its own tree),
   * lists it as recent and enqueues it; takes it back and answers 503 when a step after the write
   * fails, as invoke does.
   */
  private async create(fork: PreparedFork, id: string, opts: ForkOptions): Promise<void> {
    const { source, agent, records } = fork;
    const now = Date.now();
    const copies = [...records.reused, ...(records.given ? [records.given] : [])];
    const events = forkEvents({ id, agent: agent.name }, records, now);
    const fields = [
      ...encodeNewInvocation({
        id,
        agent: agent.name,
        input: fork.input,
        rootId: id,
        depth: 0,
        createdAt: now,
        deadline: now + opts.timeoutMs,
        defHash: agent.definitionHash,
        ...(opts.caller.owner ? { owner: opts.caller.owner } : {}),
        ...(opts.traceparent ? { traceparent: opts.traceparent } : {}),
        ...budgetOf(agent, opts),
        forkedFrom: { invocationId: source.id, callId: fork.fromCallId },
      }),
      // The conversation the node's model saw (a session's earlier turns): the reused replies
      // answered it. The fork joins no session.
      ...(source.history ? ['history', JSON.stringify(source.history)] : []),
      ...decidedApprovals(source, records.reused),
    ];
    // The texts the copies refer to are copied into the fork's tree: it never refers to another's.
    const texts: TreeTexts = new Map();
    const stored = copies.map((r) => [r.callId, JSON.stringify(storedRecord(r, texts))]);
    const creating = this.scripts.createFork(
      this.keys.invocation(id, id),
      this.keys.calls(id, id),
      this.keys.events(id),
      this.keys.texts(id),
      Math.ceil(opts.timeoutMs / 1000) + this.retentionSeconds,
      copies.length,
      ...stored.flat(),
      events.length,
      ...events,
      ...textArgs(texts),
      ...fields,
    );
    // On a cluster the fork and its queue live apart: the job only once the fork exists.
    if (isRedisCluster(this.redis)) await creating.catch(() => undefined);
    const [created, listed, queued] = await Promise.allSettled([
      creating,
      this.invocations.listRecent(id, now),
      this.invocations.enqueue(agent.name, id, opts.traceparent),
    ]);
    if (created.status === 'rejected') {
      await this.invocations.takeBack(agent.name, id, {});
      throw created.reason;
    }
    if (listed.status === 'rejected' || queued.status === 'rejected') {
      if (created.value === 1) await this.invocations.takeBack(agent.name, id, {});
      throw new MeshError(
        'unavailable',
        'The fork could not be queued, so nothing was started; retry later.',
      );
    }
  }

  /** The scope of a request's Idempotency-Key (source, API key, key) and the hash of its body. */
  private keyOf(sourceId: string, body: ForkRequest, opts: ForkOptions): { scope: string; bodyHash: string } {
    return {
      scope: IdempotencyStore.forkScope(opts.caller.owner, sourceId, opts.idempotencyKey!),
      bodyHash: IdempotencyStore.bodyHash(body),
    };
  }

  /** The fork an Idempotency-Key names: `fresh` when this request claimed it first. */
  private async claim(key: { scope: string; bodyHash: string }, fresh: string): Promise<string> {
    const entry = { v: 1 as const, invocationId: fresh, bodyHash: key.bodyHash, at: Date.now() };
    const held = await this.idempotency.claim(key.scope, entry);
    if (held.bodyHash !== key.bodyHash) throw new MeshError('idempotency_key_reused');
    return held.invocationId;
  }

  /**
   * Joins the fork an earlier request with the same key started; true when it has finished. One
   * that never appears (its request died after claiming the key) is created now, with the same id.
   */
  private async rejoin(id: string, create: () => Promise<void>, opts: ForkOptions): Promise<boolean> {
    if (!(await this.invocations.exists(id, CLAIM_GRACE_MS))) {
      await create();
      return false;
    }
    const [status, agent] = await this.redis.hmget(this.keys.invocation(id, id), 'status', 'agent');
    if (status === 'queued' && agent) await this.invocations.enqueue(agent, id, opts.traceparent);
    return typeof status === 'string' && isTerminal(status);
  }
}

/** The fork's input: checked against the agent's schema, problems at paths inside the input. */
function checkedInput(agent: AgentPlan, input: unknown): unknown {
  if (!agent.inputSchema) return input;
  const verdict = compileSchema(agent.inputSchema)(input);
  if (verdict.ok) return input;
  throw new MeshError(
    'invalid_input',
    `Invalid input: ${describeValidation(verdict.details)}`,
    verdict.details,
  );
}

/**
 * The hash fields of the approvals decided for the calls a fork reuses: a code agent's replay of
 * `ctx.approval` reads a rejection's reason from them (docs/guides/approvals-and-budgets.md).
 */
function decidedApprovals(source: InvocationState, reused: readonly CallRecord[]): string[] {
  const ids = new Set(reused.map((r) => r.callId));
  return source.approvals.flatMap((a) =>
    a.decision && ids.has(a.request.callId)
      ? [
          approvalField(a.request.callId),
          JSON.stringify(a.request),
          decisionField(a.request.callId),
          JSON.stringify(a.decision),
        ]
      : [],
  );
}
