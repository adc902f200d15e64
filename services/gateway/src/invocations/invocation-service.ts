import {
  type AgentPlan,
  callerTraceparent,
  encodeEvent,
  encodeNewInvocation,
  type InvocationView,
  isTerminal,
  type KeyLayout,
  MeshError,
  type MeshPlan,
  newRootId,
  rootOf,
  toInvocationView,
} from '@agentmesh/shared';
import {
  cancelTree,
  isRedisCluster,
  type MeshRedis,
  type MeshScripts,
  type SessionStore,
} from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import { wakeParkedJob } from '../approvals/wake-parked-job.js';
import { ANYONE, type Caller } from '../auth/caller.js';
import { GatewaySessions, historyFields, sessionFields } from '../sessions/gateway-sessions.js';
import { awaitsDecision } from './awaits-decision.js';
import { dropQueued } from './drop-queued.js';
import { IdempotencyStore } from './idempotency-store.js';
import { InvocationWriter } from './invocation-writer.js';
import { invocationOfDoneMessage } from './read-invocation-safely.js';
import { budgetOf, idempotentBody, type StartOptions } from './start-options.js';
import type { Waiters } from './waiters.js';

export type { StartOptions } from './start-options.js';

// A repeated Idempotency-Key waits this long for the first request to create the invocation; past
// it the first request is taken to have died after claiming the key, and this one creates it.
export const CLAIM_GRACE_MS = 2000;

/**
 * Starts and cancels root invocations, and reads them back: the gateway's side of the state in Redis.
 * The writes it shares with forks are InvocationWriter's (invocation-writer.ts).
 */
export class InvocationService extends InvocationWriter {
  private readonly idempotency: IdempotencyStore;
  /** Sessions (docs/guides/sessions.md); undefined when the service was built without a session store. */
  readonly sessions: GatewaySessions | undefined;

  constructor(
    redis: MeshRedis,
    scripts: MeshScripts,
    keys: KeyLayout,
    queues: Map<string, Queue>,
    private readonly waiters: Waiters,
    retentionSeconds: number,
    sessionStore?: SessionStore,
    plan: () => MeshPlan | undefined = () => undefined,
  ) {
    super(redis, scripts, keys, queues, retentionSeconds);
    this.idempotency = new IdempotencyStore(redis, keys, retentionSeconds);
    this.sessions =
      sessionStore && new GatewaySessions(sessionStore, plan, (agent, id, tp) => this.enqueue(agent, id, tp));
  }

  /**
   * Creates a root invocation, enqueues it, and waits up to `waitMs` for it to finish. With an
   * Idempotency-Key already used by the same owner for the same agent, it answers the invocation
   * that key started (waiting `waitMs` for it too) and starts nothing.
   */
  async start(agent: AgentPlan, input: unknown, options: StartOptions): Promise<InvocationView> {
    // Started by the active span (the request's), its invoke_agent span hangs there (docs/reference/traces.md).
    const opts = { ...options, traceparent: callerTraceparent(options.traceparent) };
    const fresh = newRootId();
    const id = opts.idempotencyKey === undefined ? fresh : await this.claim(agent.name, input, fresh, opts);
    const before = opts.beforeLaunch?.(id, id === fresh);
    // On one server what it writes went out first, on the connection the invocation's writes take,
    // which Redis serves in order: a fresh create need not wait for its answers, only fail with it.
    if (before && (id !== fresh || isRedisCluster(this.redis))) await before;
    // Handled from here (a session's create waits on other reads before it takes this one up), and
    // waited for below.
    const settled = before?.catch(() => undefined);
    try {
      return await this.launch(
        id,
        id === fresh
          ? () => this.create(agent, input, id, opts, before).then(() => false)
          : () => this.rejoin(agent, input, id, opts),
        { ...opts, rejoined: id !== fresh },
      );
    } finally {
      // Settled before this is, however it ends: the caller's `beforeLaunch` has run to its end.
      await settled;
    }
  }

  /**
   * Creates a root invocation (`create`: a new one, or rejoining the one an Idempotency-Key named,
   * true when that one has finished already) and waits up to `waitMs` for it to finish — with
   * `untilDecision`, or until some node of its tree waits on a human (docs/reference/rest-api.md; `rejoined`: one
   * that may be waiting already); answers its view. Invoke's path, and a fork's (docs/guides/durability.md).
   */
  async launch(
    id: string,
    create: () => Promise<boolean>,
    opts: Pick<StartOptions, 'waitMs' | 'signal' | 'untilDecision' | 'owner'> & { rejoined?: boolean },
  ): Promise<InvocationView> {
    // Registered before the job exists, so a fast finish cannot slip past it.
    const waiter = this.waiters.register(id, { approvals: opts.untilDecision === true });
    try {
      let finished = await create();
      // A repeated key may find the tree waiting on a human already: its wake went by.
      if (!finished && opts.rejoined && opts.untilDecision)
        finished = await awaitsDecision(this.redis, this.keys, id, opts.owner);
      if (opts.waitMs > 0 && !finished) await waiter.wait(opts.waitMs, opts.signal);
    } finally {
      waiter.cancel();
    }
    // The done message carries the finished invocation when it is small: no read then.
    const done = waiter.message === undefined ? undefined : invocationOfDoneMessage(waiter.message);
    if (done?.state.id === id) return toInvocationView(done.state, done.calls);
    return (await this.view(id))!;
  }

  /**
   * Cancels an invocation `caller` may see and its whole subtree (never its ancestors): flags
   * every node in Redis, which every runner checks before each call; broadcasts the ids so runners
   * abort calls in flight; removes jobs still queued and finishes their invocations `cancelled`
   * here. Parked parents resume when their children end and finish `cancelled`. Returns undefined
   * for an unknown (or invisible) id; a terminal invocation is returned unchanged, `changed: false`.
   */
  async cancel(
    id: string,
    caller: Caller = ANYONE,
  ): Promise<{ view: InvocationView; changed: boolean } | undefined> {
    const before = await this.viewFor(id, caller);
    if (!before) return undefined;
    if (isTerminal(before.status)) return { view: before, changed: false };
    const flagged = await cancelTree(this.scripts, this.keys, id);
    const pipeline = this.redis.pipeline();
    for (const node of flagged) pipeline.publish(this.keys.cancelChannel(), node.id);
    await pipeline.exec();
    for (const node of flagged) {
      if (node.status === 'queued')
        await dropQueued(this.scripts, this.keys, this.queues, this.retentionSeconds, node.id);
      // Parked on an approval (docs/guides/approvals-and-budgets.md): woken now, it finishes `cancelled` at once.
      if (node.status === 'waiting') await wakeParkedJob(this.redis, this.keys, this.queues, node.id);
    }
    // A session's invocation cancelled before it ran advances its session now (docs/guides/sessions.md).
    await this.settleSessionOf(id);
    return { view: (await this.view(id))!, changed: true };
  }

  /**
   * Settles the session of a root invocation, if it has one (docs/guides/sessions.md): one still `queued` may
   * be owed its turn by a runner that died before advancing the session.
   */
  async settleSessionOf(id: string): Promise<void> {
    const session = await this.sessionOf(id);
    if (session) await this.sessions?.settle(session);
  }

  /** The session a root invocation continues, if any. */
  async sessionOf(id: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.invocation(rootOf(id), id), 'session')) ?? undefined;
  }

  /** True when the view is in a terminal state. */
  static finished(view: InvocationView): boolean {
    return isTerminal(view.status);
  }

  /**
   * Writes the invocation (unless it exists), lists it as recent, and enqueues its job. When a step
   * after the write fails, the invocation is taken back (deleted) and the request answers 503
   * `unavailable`: a 5xx from invoke means nothing was created, so a retry is no second run. Were
   * the take-back to fail too, the invocation still expires (its keys carry deadline + retention).
   * The writes share one connection, which Redis serves in order, and the invocation's is sent
   * first, so its job never exists before it does. On one server the create lists the root in the
   * same step (one command fewer on every invoke); on a cluster the listing is a step of its own.
   */
  private async create(
    agent: AgentPlan,
    input: unknown,
    id: string,
    opts: StartOptions,
    /** What `beforeLaunch` started: the create fails (taken back) when it does. */
    before?: Promise<void>,
  ): Promise<void> {
    const claim = opts.session && (await this.sessions!.bind(agent.name, id, opts.session, opts.owner));
    const now = Date.now();
    const cluster = isRedisCluster(this.redis);
    const creating = this.scripts.createInvocation(
      ...(cluster
        ? [2, this.keys.invocation(id, id), this.keys.events(id)]
        : [3, this.keys.invocation(id, id), this.keys.events(id), this.keys.recent()]),
      encodeEvent({ id, agent: agent.name }, 'status', { status: 'queued' }, now),
      Math.ceil(opts.timeoutMs / 1000) + this.retentionSeconds,
      ...(cluster ? ['', '', '', '', ''] : this.listing(id, now)),
      ...encodeNewInvocation({
        id,
        agent: agent.name,
        input,
        rootId: id,
        depth: 0,
        createdAt: now,
        deadline: now + opts.timeoutMs,
        defHash: agent.definitionHash,
        ...(opts.owner ? { owner: opts.owner } : {}),
        ...(opts.traceparent ? { traceparent: opts.traceparent } : {}),
        ...budgetOf(agent, opts),
      }),
      ...(opts.session ? sessionFields(opts.session.id, claim) : historyFields(opts.history)),
    );
    // On a cluster the invocation and its queue are on different nodes, served in no common order:
    // the job is added only once the invocation exists (on one server, one connection keeps it).
    // There the listing goes out after the job's add (once BullMQ's add, all microtasks, has sent
    // it): it is independent of both, and kept off the path that wakes a runner.
    if (cluster) await creating.catch(() => undefined);
    const listing = cluster
      ? new Promise((sent) => setImmediate(sent)).then(() => this.listRecent(id, now))
      : undefined;
    const [created, listed, queued, prepared] = await Promise.allSettled([
      creating,
      listing,
      // One waiting its session's turn gets its job when the running one has ended (settleSession).
      claim && claim.kind !== 'start' ? undefined : this.enqueue(agent.name, id, opts.traceparent),
      before,
    ]);
    if (created.status === 'rejected') {
      // Nothing of ours may outlive a failed create: the job and the listing go too.
      await this.takeBack(agent.name, id, opts);
      throw created.reason;
    }
    if (listed.status === 'rejected' || queued.status === 'rejected' || prepared.status === 'rejected') {
      if (created.value === 1) await this.takeBack(agent.name, id, opts);
      throw new MeshError(
        'unavailable',
        'The invocation could not be queued, so nothing was started; retry later.',
      );
    }
    // `interrupt`: the running one is cancelled as DELETE would; its end starts this one. An
    // earlier interrupt still waiting to start is superseded: it ends cancelled, never runs.
    if (claim?.kind === 'interrupt') {
      for (const other of [claim.current, claim.superseded]) {
        // Bound by another request that may still be creating it (another gateway): wait for it.
        if (other && (await this.exists(other, CLAIM_GRACE_MS))) await this.cancel(other);
      }
      await this.sessions?.settle(opts.session!.id);
    }
  }

  /** The invocation an Idempotency-Key names: `fresh` when this request claimed it first. */
  private async claim(agent: string, input: unknown, fresh: string, opts: StartOptions): Promise<string> {
    const bodyHash = IdempotencyStore.bodyHash(idempotentBody(input, opts));
    const scope = IdempotencyStore.scope(opts.owner, agent, opts.idempotencyKey!);
    const held = await this.idempotency.claim(scope, { v: 1, invocationId: fresh, bodyHash, at: Date.now() });
    if (held.bodyHash !== bodyHash) throw new MeshError('idempotency_key_reused');
    return held.invocationId;
  }

  /**
   * Joins the invocation an earlier request with the same Idempotency-Key started; true when it
   * has already finished. Creating and enqueueing are no-ops for an id that exists (the job id is
   * the invocation id), so a request that outwaited a first one that died after claiming the key
   * does both itself, and the invocation still runs once.
   */
  private async rejoin(agent: AgentPlan, input: unknown, id: string, opts: StartOptions): Promise<boolean> {
    if (!(await this.exists(id, CLAIM_GRACE_MS))) {
      await this.create(agent, input, id, opts);
      return false;
    }
    const [status, session] = await this.redis.hmget(this.keys.invocation(id, id), 'status', 'session');
    // One of a session gets its job when its turn comes: settling the session gives it then.
    if (status === 'queued' && session) await this.sessions?.settle(session);
    else if (status === 'queued') await this.enqueue(agent.name, id, opts.traceparent);
    return typeof status === 'string' && isTerminal(status);
  }
}
