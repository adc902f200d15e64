import {
  type ApprovalRequest,
  type CallRecord,
  encodeEvent,
  type KeyLayout,
  MeshError,
} from '@agentmesh/shared';
import { APPROVAL_WAKE_PREFIX, type MeshRedis, type MeshScripts } from '@agentmesh/shared/redis';
import { type Activation, FencedOutError } from './activation.js';

/** How many pending approvals one API key's index keeps (the newest); older ones still decide by id. */
const INDEX_LIMIT = 100_000;

/** A call to ask approval for: its record's kind and name, and what the pending approval shows. */
export interface ApprovalAsk {
  callId: string;
  kind: CallRecord['kind'] | 'code';
  /** The call record's name (a delegation: the sub-agent). */
  recordName: string;
  /** The name the approval shows (a delegation: `_subagent_<name>`). */
  name: string;
  args: unknown;
  providerId?: string | undefined;
  /** The runner asking. */
  runner: string;
}

/**
 * The writes of approvals (docs/guides/approvals-and-budgets.md): a request recorded in the tree (one Lua step, fenced), the
 * park that names the job to wake, and the owner's index of pending approvals (its own hash tag:
 * written after the tree, and rewritten at every park, so a crash in between heals on resume).
 */
export class ApprovalStore {
  constructor(
    private readonly redis: MeshRedis,
    private readonly scripts: MeshScripts,
    private readonly keys: KeyLayout,
    private readonly flush: (activation: Activation) => Promise<void>,
  ) {}

  /** Records the call `awaiting_approval` and its request, with the `approval_requested` event. */
  async request(activation: Activation, ask: ApprovalAsk): Promise<void> {
    await this.flush(activation);
    const s = activation.state;
    const now = new Date().toISOString();
    const record: CallRecord = {
      v: 1,
      callId: ask.callId,
      kind: ask.kind === 'code' ? 'tool' : ask.kind,
      name: ask.recordName,
      status: 'awaiting_approval',
      startedAt: now,
      runner: ask.runner,
      ...(ask.providerId ? { providerId: ask.providerId } : {}),
    };
    const request: ApprovalRequest = {
      callId: ask.callId,
      kind: ask.kind,
      name: ask.name,
      args: ask.args ?? null,
      requestedAt: now,
    };
    const ok = await this.scripts.requestApproval(
      this.keys.invocation(s.rootId, s.id),
      this.keys.calls(s.rootId, s.id),
      this.keys.events(s.rootId),
      activation.epoch,
      ask.callId,
      JSON.stringify(record),
      JSON.stringify(request),
      encodeEvent(s, 'approval_requested', { callId: ask.callId, name: ask.name, args: request.args }),
    );
    if (ok === 2) throw new MeshError('cancelled');
    if (ok !== 1) throw new FencedOutError(s.id);
    if (!activation.records.has(ask.callId)) activation.records.set(ask.callId, record);
    if (!s.approvals.some((a) => a.request.callId === ask.callId)) s.approvals.push({ request });
  }

  /** Marks the invocation `waiting` on its approvals, naming `jobId` as the job to wake; indexes them. */
  async park(activation: Activation, jobId: string): Promise<void> {
    await this.flush(activation);
    const s = activation.state;
    const ok = await this.scripts.park(
      this.keys.invocation(s.rootId, s.id),
      this.keys.events(s.rootId),
      activation.epoch,
      'waiting',
      new Date().toISOString(),
      jobId,
    );
    if (ok !== 1) throw new FencedOutError(s.id);
    const pending = s.approvals.filter((a) => !a.decision);
    if (pending.length === 0) return;
    const index = this.keys.approvalIndex(s.owner);
    const ttl = Math.max(60, Math.ceil((s.deadline - Date.now()) / 1000) + 3600);
    const p = this.redis.pipeline();
    for (const a of pending) p.zadd(index, Date.parse(a.request.requestedAt), `${s.id} ${a.request.callId}`);
    p.zremrangebyrank(index, 0, -(INDEX_LIMIT + 1));
    // Never shortens it: another tree's approval may wait longer.
    p.expire(index, ttl, 'GT');
    p.expire(index, ttl, 'NX');
    await p.exec();
    // Once GET /approvals lists it (and apart: the index has its own cluster slot), a request
    // waiting on the root with `?wait` answers now: a human must decide (docs/reference/rest-api.md).
    await this.redis.publish(this.keys.doneChannel(), `${APPROVAL_WAKE_PREFIX}${s.rootId}`);
  }

  /**
   * True while the invocation must go on waiting: not cancelled, before its deadline, and some
   * approval undecided. Read after the job is parked, so a decision that came first is not missed.
   */
  async stillWaiting(activation: Activation): Promise<boolean> {
    const s = activation.state;
    const [status, cancelled, pending] = await this.redis.hmget(
      this.keys.invocation(s.rootId, s.id),
      'status',
      'cancelRequested',
      'approvalsPending',
    );
    if (cancelled === '1' || Date.now() >= s.deadline || status !== 'waiting') return false;
    return Number(pending ?? 0) > 0;
  }
}
