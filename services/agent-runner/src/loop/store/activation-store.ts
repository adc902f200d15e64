import {
  type CallRecord,
  type CodedError,
  compareCallIds,
  encodeEvent,
  type InvocationState,
  isTerminal,
  type KeyLayout,
  MeshError,
  type MeshEventType,
  storedRecord,
  type TreeTexts,
} from '@agentmesh/shared';
import {
  type FlaggedNode,
  finishArgs,
  isRedisCluster,
  type MeshRedis,
  type MeshScripts,
  type Outcome,
} from '@agentmesh/shared/redis';
import type { Activation, ChildSubmission, PendingRecord, ScriptPipeline } from './activation.js';
import { FencedOutError } from './activation.js';
import { recordCallArgs } from './activation-args.js';
import { type ActivateReply, activationOf } from './activation-reply.js';
import { putTextsBack, readRecords, readState } from './activation-texts.js';
import { ApprovalStore } from './approval-store.js';
import { cancelSubtree } from './cancel-subtree.js';
import { failTree } from './fail-tree.js';
import { checkPending, queuePending } from './pending-records.js';
import { type SubmitOptions, submitChildren } from './submit-children.js';

export { type Activation, type ChildSubmission, FencedOutError } from './activation.js';

const NO_USAGE = { modelCalls: 0, promptTokens: 0, completionTokens: 0 };

/** Every state change one activation makes, each one Lua step fenced by the activation's epoch. */
export class ActivationStore {
  private approvalStore: ApprovalStore | undefined;

  /** The writes of approvals (docs/guides/approvals-and-budgets.md). */
  get approvals(): ApprovalStore {
    this.approvalStore ??= new ApprovalStore(this.redis, this.scripts, this.keys, (a) => this.flush(a));
    return this.approvalStore;
  }

  constructor(
    private readonly redis: MeshRedis,
    private readonly scripts: MeshScripts,
    private readonly keys: KeyLayout,
    private readonly retentionSeconds: number,
  ) {}

  /**
   * Takes a new epoch and loads state and records; undefined when the invocation is gone. With
   * `react`, the model call the activation starts with may be recorded `started` in the same step
   * (see ACTIVATE); `prestarted` then names it, and callModel skips its write.
   */
  async activate(
    id: string,
    rootId: string,
    runner: string,
    react?: { firstCallId: string; model: string; defHash: string; child: boolean },
  ): Promise<Activation | undefined> {
    const res = (await this.scripts.activate(
      this.keys.invocation(rootId, id),
      this.keys.calls(rootId, id),
      this.keys.events(rootId),
      this.keys.watch(rootId),
      Date.now(),
      runner,
      new Date().toISOString(),
      ...(react ? [react.firstCallId, react.model, react.defHash, react.child ? '1' : '0'] : []),
    )) as ActivateReply | null;
    return activationOf(res);
  }

  /**
   * The activation the take of its job made (see take-activation.ts): ACTIVATE's reply, null when
   * the invocation is gone, or the failure of the step, thrown as ACTIVATE's own would be.
   */
  taken(reply: unknown[] | null): Activation | undefined {
    if (reply?.[0] === 'error')
      throw new Error(`ACTIVATE in the take of the job failed: ${String(reply[1])}`);
    return activationOf(reply as ActivateReply | null);
  }

  /** Puts back the tree texts its records refer to (activation-texts.ts). */
  readTexts(activation: Activation): Promise<void> {
    return putTextsBack(this.redis, this.keys, activation);
  }

  /** Re-reads the call records (children write their parent's records when they finish). */
  async reloadRecords(activation: Activation): Promise<Map<string, CallRecord>> {
    await this.flush(activation);
    const state = activation.state;
    const records = await readRecords(this.redis, this.keys, state.rootId, state.id);
    return new Map(records.map((r) => [r.callId, r]));
  }

  /**
   * Writes a call record (and usage), appending an event; throws FencedOutError when fenced out.
   * Recording a call as `started` also checks the cancel flag (no extra round trip): a cancelled
   * invocation starts no further call, and this throws MeshError('cancelled').
   * With `defer`, a finished record is kept in memory and sent ahead of the activation's next
   * write, in the same round trip (a model reply is then recorded together with what it leads to:
   * the next call's `started`, the delegations, the finish). Nothing leaves the process in between,
   * so a crash before that write loses only the reply, and the call, in doubt, is re-issued.
   */
  async record(
    activation: Activation,
    record: CallRecord,
    event?: { type: MeshEventType; data: unknown },
    usage: { modelCalls: number; promptTokens: number; completionTokens: number } = NO_USAGE,
    memoryWrites: [key: string, valueJson: string][] = [],
    opts: { defer?: boolean } = {},
  ): Promise<void> {
    // Stored with its large texts referred to (tree-texts.ts); the activation keeps it whole.
    const texts: TreeTexts = new Map();
    const write: PendingRecord = {
      callId: record.callId,
      recordJson: JSON.stringify(storedRecord(record, texts)),
      texts,
      eventJson: event ? encodeEvent(activation.state, event.type, event.data) : '',
      usage: [usage.modelCalls, usage.promptTokens, usage.completionTokens],
    };
    if (opts.defer && record.status !== 'started' && memoryWrites.length === 0) {
      activation.pending = [...(activation.pending ?? []), write];
      activation.records.set(record.callId, record);
      return;
    }
    const args = recordCallArgs(this.keys, activation, write, record.status === 'started');
    args.push(...memoryWrites.flat());
    const ok = await this.send(activation, 'mesh_recordCall', args);
    if (ok === 2) throw new MeshError('cancelled');
    if (ok === 3) await failTree(this.redis, this.scripts, this.keys, activation);
    if (ok !== 1) throw new FencedOutError(activation.state.id);
    activation.records.set(record.callId, record);
  }

  /**
   * Ends a started call `cancelled`: the invocation was cancelled while the call was out, which is
   * not the call's failure, so no failure is recorded (docs/architecture/durability-and-fencing.md).
   */
  recordCancelled(activation: Activation, started: CallRecord): Promise<void> {
    return this.record(activation, { ...started, status: 'cancelled', finishedAt: new Date().toISOString() });
  }

  /** Sends the activation's deferred records now (no-op when there are none). */
  async flush(activation: Activation): Promise<void> {
    if (!activation.pending?.length) return;
    const p = this.redis.pipeline();
    queuePending(this.keys, activation, p as unknown as ScriptPipeline);
    checkPending(activation, (await p.exec()) ?? []);
  }

  /**
   * Runs one Lua step (a `mesh_…` command) for `a`: alone, or behind the activation's deferred
   * records in one pipeline (one round trip). Resolves with the step's reply.
   */
  private async send(
    activation: Activation | undefined,
    command: string,
    args: (string | number)[],
  ): Promise<unknown> {
    if (!activation?.pending?.length) return (this.redis as unknown as ScriptPipeline)[command]!(...args);
    const p = this.redis.pipeline();
    const n = queuePending(this.keys, activation, p as unknown as ScriptPipeline);
    (p as unknown as ScriptPipeline)[command]!(...args);
    const results = (await p.exec()) ?? [];
    checkPending(activation, results.slice(0, n));
    const [err, value] = results[n] ?? [new Error('no reply')];
    if (err) throw err;
    return value;
  }

  /**
   * Records each sub-agent call `started` and creates its child invocation, in one pipeline with
   * the deferred records; see submit-children.ts for the park and the steps that may follow.
   */
  submitChildren(activation: Activation, children: ChildSubmission[], opts?: SubmitOptions) {
    return submitChildren(this.redis, this.keys, activation, children, opts);
  }

  /** True on one Redis server: a tree's keys and the queues then share one order (not on a cluster). */
  get oneServer(): boolean {
    return !isRedisCluster(this.redis);
  }

  /** Marks the invocation `waiting` before it releases its worker slot to wait on its children. */
  park(activation: Activation): Promise<void> {
    return this.moveTo(activation, 'waiting');
  }

  /** Marks a parked invocation `running` again: its children all finished before it let go. */
  unpark(activation: Activation): Promise<void> {
    return this.moveTo(activation, 'running');
  }

  /** Marks the invocation `queued`: a draining runner requeues it for any runner to take. */
  requeue(activation: Activation): Promise<void> {
    return this.moveTo(activation, 'queued');
  }

  private async moveTo(activation: Activation, status: 'waiting' | 'running' | 'queued'): Promise<void> {
    const s = activation.state;
    const ok = await this.send(activation, 'mesh_park', [
      this.keys.invocation(s.rootId, s.id),
      this.keys.events(s.rootId),
      activation.epoch,
      status,
      new Date().toISOString(),
    ]);
    if (ok !== 1) throw new FencedOutError(activation.state.id);
  }

  /**
   * Writes the terminal state once; for a delegation also completes the parent's call record with
   * the tool message content (success) or the error (failure). `epoch` undefined = unfenced (a
   * parent failing a lost child). Returns the end as written — a root's cancellation becomes its
   * tree's failure (`budget_exceeded`) when its tree was failed — or undefined when it was
   * terminal already. The deferred records of `by` (the activation finishing) go first, in the
   * same round trip.
   */
  async finish(
    s: InvocationState,
    epoch: number | undefined,
    outcome: Outcome,
    by?: Activation,
  ): Promise<Outcome | undefined> {
    const args = this.finishStep(s, epoch, outcome, by);
    const ret = await this.send(by, 'mesh_finish', args);
    if (typeof ret === 'string') return { status: 'failed', error: JSON.parse(ret) as CodedError };
    if (ret !== 1 && epoch !== undefined) {
      const status = await this.redis.hget(this.keys.invocation(s.rootId, s.id), 'status');
      if (!isTerminal(status ?? '')) throw new FencedOutError(s.id);
    }
    return ret === 1 ? outcome : undefined;
  }

  /**
   * FINISH's keys and arguments. The usual end has one model reply pending: FINISH writes it itself
   * (one Lua step, no pipeline), and it is no longer pending.
   */
  private finishStep(
    s: InvocationState,
    epoch: number | undefined,
    outcome: Outcome,
    by?: Activation,
  ): (string | number)[] {
    const last = by?.pending?.length === 1 ? by.pending[0]! : undefined;
    // The reply that gave the answer and the answer are one text: sent and stored once.
    const texts: TreeTexts = new Map(last?.texts);
    const args = finishArgs(this.keys, s, epoch, outcome, this.retentionSeconds, Date.now(), texts);
    if (last) {
      by!.pending = [];
      args.push(last.callId, last.recordJson, last.eventJson, ...last.usage);
    }
    return args;
  }

  /** Commits a code agent's memory writes; throws FencedOutError when fenced out. */
  async commitMemory(activation: Activation, writes: [key: string, valueJson: string][]): Promise<void> {
    const s = activation.state;
    const ok = await this.send(activation, 'mesh_commitMemory', [
      this.keys.invocation(s.rootId, s.id),
      this.keys.memory(s.rootId, s.id),
      activation.epoch,
      ...writes.flat(),
    ]);
    if (ok !== 1) throw new FencedOutError(s.id);
  }

  /** Discards the records from `callId` on (in call order): they no longer match the code. */
  async discardFrom(activation: Activation, callId: string): Promise<void> {
    const s = activation.state;
    const stale = [...activation.records.keys()].filter((id) => compareCallIds(id, callId) >= 0);
    const ok = await this.send(activation, 'mesh_discardCalls', [
      this.keys.invocation(s.rootId, s.id),
      this.keys.calls(s.rootId, s.id),
      activation.epoch,
      ...stale,
    ]);
    if (ok !== 1) throw new FencedOutError(s.id);
    for (const id of stale) activation.records.delete(id);
  }

  /** Flags invocation `id` and its subtree cancelled and broadcasts it (cancel-subtree.ts). */
  cancelSubtree(id: string): Promise<FlaggedNode[]> {
    return cancelSubtree(this.redis, this.scripts, this.keys, id);
  }

  /** Reads one invocation's state (a child, when its parent checks on it). */
  readState(rootId: string, id: string): Promise<InvocationState | undefined> {
    return readState(this.redis, this.keys, rootId, id);
  }
}
