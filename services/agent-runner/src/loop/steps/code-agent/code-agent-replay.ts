import {
  type AgentPlan,
  type ApprovalDecision,
  type CallRecord,
  type CodedError,
  codedError,
  type JobData,
  type LoadedCodeAgent,
  MeshError,
  normalizeResult,
  rootOf,
  type SubagentResult,
} from '@agentmesh/shared';
import type { Job } from 'bullmq';
import type { Activation } from '../../store/activation-store.js';
import type { AgentRun } from '../agent-run.js';
import { logApprovalRequest } from '../approvals/log-approval-request.js';
import type { RunnerContext } from '../runner-context.js';
import { CallBatch } from './call-batch.js';
import { agentContext, codeCallId, recordFailure, submitOne } from './code-agent-context.js';
import { depthRefusal, inputRefusal, refusedRecord, stepError } from './code-agent-refusals.js';
import { ReplayMemory } from './replay-memory.js';
import { DEADLINE_EXCEEDED, never, type ReplayOutcome } from './replay-outcome.js';
import { runStep } from './run-step.js';

// setTimeout's longest delay; deadlines are bounded far below it (MESH_MAX_TIMEOUT_SECONDS).
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * One execution of a code agent's `run` from the start. Durable calls are numbered in the order
 * the code makes them; a recorded one is answered from its record, a new one is recorded. The run
 * is `blocked` when nothing of ours is in flight and it waits on children that have not finished:
 * every call started together (Promise.all) has been submitted by then. Limits apply as to a
 * ReAct agent (docs/architecture/durability-and-fencing.md): the deadline ends the run (`failed`), a delegation past the depth limit
 * or a call past the per-turn limits is refused as data (recorded, so replays agree).
 */
export class CodeAgentReplay {
  private seq = 0;
  private busy = 0;
  private pending = 0;
  /** Of `pending`: the children submitted, and the approvals asked for (docs/guides/approvals-and-budgets.md). */
  children = 0;
  approvals = 0;
  private settled = false;
  private settle: (o: ReplayOutcome) => void = () => undefined;
  private readonly batch: CallBatch;
  private readonly expiry = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  /** `ctx.memory`: this invocation's own; writes are committed with the next durable record. */
  readonly memory = new ReplayMemory();

  private readonly ctx: RunnerContext;
  private readonly agent: AgentPlan;
  private readonly activation: Activation;
  private readonly job: Job<JobData>;
  private readonly signal: AbortSignal;

  constructor(run: AgentRun) {
    ({
      ctx: this.ctx,
      agent: this.agent,
      activation: this.activation,
      job: this.job,
      signal: this.signal,
    } = run);
    this.batch = new CallBatch(run.ctx.limits);
  }

  /** Runs the agent's code once, to its end, until it blocks on children, or to the deadline. */
  run(def: LoadedCodeAgent): Promise<ReplayOutcome> {
    return new Promise((resolve) => {
      this.settle = (o) => {
        if (this.settled) return;
        this.settled = true;
        clearTimeout(this.timer);
        resolve(o);
      };
      const remaining = Math.max(0, this.activation.state.deadline - Date.now());
      this.timer = setTimeout(() => this.pastDeadline(), Math.min(remaining, MAX_TIMER_MS));
      const signal = AbortSignal.any([this.signal, this.expiry.signal]);
      const context = agentContext(this, signal, this.ctx.log, this.activation.state);
      Promise.resolve()
        .then(() => def.run(this.activation.state.input, context))
        .then(
          (value) => this.afterWork(() => this.settle({ kind: 'returned', value })),
          (error) => this.settle({ kind: 'threw', error }),
        );
    });
  }

  /** `ctx.subagent(name, input)`: a child's result as data; never throws for a child's failure. */
  async subagent(name: string, input: unknown): Promise<SubagentResult> {
    const callId = codeCallId(this.seq++);
    const refusal = this.batch.admit('subagent');
    if (this.settled) return never();
    if (!this.agent.subagents.includes(name)) {
      const message = `Sub-agent ${name} is not a declared sub-agent of ${this.agent.name}.`;
      return this.deliver({ ok: false, error: codedError('agent_not_found', message) });
    }
    const record = await this.system(() => this.recorded(callId, 'subagent', name));
    if (record) this.memory.apply(record.memory);
    if (record && record.status !== 'started') {
      if (record.status !== 'succeeded') return this.deliver({ ok: false, error: recordFailure(record) });
      // A fork's delegation carries its output: its child is in the original tree, or none (docs/guides/durability.md, fork).
      if (record.outputJson !== undefined)
        return this.deliver({ ok: true, output: JSON.parse(record.outputJson) as unknown });
      const child = await this.system(() =>
        this.ctx.store.readState(rootOf(record.childId!), record.childId!),
      );
      return this.deliver({ ok: true, output: child?.output });
    }
    if (!record) {
      if (this.overdue()) return never();
      // In the ReAct planner's order: the calls cap, the arguments, the depth, the delegations cap.
      const error =
        refusal?.code === 'too_many_calls'
          ? refusal
          : (inputRefusal(name, input) ??
            depthRefusal(this.activation.state.depth, this.ctx.limits.maxDepth) ??
            refusal);
      if (error) {
        await this.system(() => this.refuse(callId, 'subagent', name, error));
        return this.deliver({ ok: false, error });
      }
      await this.system(async () => {
        const writes = this.memory.take();
        if (writes.length > 0) await this.ctx.store.commitMemory(this.activation, writes);
        await submitOne(
          this.ctx,
          this.job,
          this.activation,
          callId,
          name,
          input as Record<string, unknown>,
          writes,
        );
      });
    }
    this.pending++;
    this.children++;
    this.checkBlocked();
    return never(); // answered by a later replay, once the child is done
  }

  /** `ctx.step(name, fn)`: runs `fn` once; its JSON result is recorded and replayed. */
  async step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
    const callId = codeCallId(this.seq++);
    const refusal = this.batch.admit('step');
    if (this.settled) return never();
    const label = `step:${name}`;
    const record = await this.system(() => this.recorded(callId, 'tool', label));
    if (record && record.status !== 'started') {
      this.memory.apply(record.memory);
      this.batch.reset();
      if (record.status === 'succeeded') return JSON.parse(record.content ?? 'null') as T;
      throw stepError(record, name);
    }
    // Not recorded, or started by an activation that crashed during `fn`: it runs (again).
    if (this.overdue()) return never();
    if (!record && refusal) {
      await this.system(() => this.refuse(callId, 'tool', label, refusal));
      this.batch.reset();
      throw new MeshError(refusal.code as 'too_many_calls', refusal.message);
    }
    try {
      return await this.track(() =>
        runStep(
          {
            memory: this.memory,
            runnerId: this.ctx.runnerId,
            isSettled: () => this.settled,
            write: (record, writes) =>
              this.system(() => this.ctx.store.record(this.activation, record, undefined, undefined, writes)),
          },
          callId,
          label,
          fn,
          record,
        ),
      );
    } finally {
      this.batch.reset(); // a result (or the error) reached the code
    }
  }

  /**
   * `ctx.approval(name, payload)` (docs/guides/approvals-and-budgets.md): asks a human once (recorded like any durable call,
   * `approval:<name>`), and the run blocks until a decision; a replay answers it from the record.
   */
  async approval(name: string, payload: unknown): Promise<ApprovalDecision> {
    const callId = codeCallId(this.seq++);
    this.batch.admit('step');
    if (this.settled) return never();
    const label = `approval:${name}`;
    const record = await this.system(() => this.recorded(callId, 'tool', label));
    if (record?.status === 'approved' || record?.status === 'rejected') {
      const decision = this.activation.state.approvals.find((a) => a.request.callId === callId)?.decision;
      const approved = record.status === 'approved';
      const reason = approved ? undefined : decision?.reason;
      return this.deliver(reason === undefined ? { approved } : { approved, reason });
    }
    if (!record) {
      if (this.overdue()) return never();
      const args = normalizeResult(payload ?? null);
      await this.system(async () => {
        const writes = this.memory.take();
        if (writes.length > 0) await this.ctx.store.commitMemory(this.activation, writes);
        await this.ctx.store.approvals.request(this.activation, {
          callId,
          kind: 'code',
          recordName: label,
          name,
          args,
          runner: this.ctx.runnerId,
        });
        logApprovalRequest(this.ctx, this.activation, callId, name);
      });
    }
    this.pending++;
    this.approvals++;
    this.checkBlocked();
    return never(); // answered by a later replay, once decided
  }

  /** The record at `callId` if it is the same call; a different one means the code is not deterministic. */
  private async recorded(
    callId: string,
    kind: CallRecord['kind'],
    name: string,
  ): Promise<CallRecord | undefined> {
    const record = this.activation.records.get(callId);
    if (!record || (record.kind === kind && record.name === name)) return record;
    const message = `Non-deterministic code agent ${this.agent.name}: call ${callId} was ${record.kind} ${record.name}, the code now makes ${kind} ${name}; the records from there on are discarded.`;
    this.ctx.log.warn({ invocationId: this.activation.state.id, callId }, message);
    await this.ctx.store.discardFrom(this.activation, callId);
    return undefined;
  }

  /** Records a call refused before it ran (a limit), so every replay answers it the same way. */
  private async refuse(callId: string, kind: CallRecord['kind'], name: string, error: CodedError) {
    const writes = this.memory.take();
    const record = refusedRecord({ callId, kind, name, error, runner: this.ctx.runnerId, memory: writes });
    const event = { type: 'tool_call' as const, data: { callId, name, status: 'failed', error } };
    await this.ctx.store.record(this.activation, record, event, undefined, writes);
  }

  /** A result reaches the code: calls it makes next are a new batch. */
  private deliver<T>(value: T): T {
    this.batch.reset();
    return value;
  }

  /** True (and the run ends `deadline_exceeded`) when no new call may start any more. */
  private overdue(): boolean {
    if (Date.now() < this.activation.state.deadline) return false;
    this.pastDeadline();
    return true;
  }

  private pastDeadline(): void {
    this.expiry.abort(new MeshError('deadline_exceeded', DEADLINE_EXCEEDED.message));
    this.settle({ kind: 'failed', error: DEADLINE_EXCEEDED });
  }

  /**
   * Our own durable work: a failure (Redis, fenced out, the invocation cancelled) ends the replay
   * and goes to the activation; it never reaches the agent's code, which could swallow it.
   */
  private async system<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.track(fn);
    } catch (error) {
      this.settle({ kind: 'crashed', error });
      return never();
    }
  }

  /** Counts our own work in flight, so a run waiting on it is not taken for blocked. */
  private async track<T>(fn: () => Promise<T>): Promise<T> {
    this.busy++;
    try {
      return await fn();
    } finally {
      this.busy--;
      this.checkBlocked();
    }
  }

  private afterWork(fn: () => void): void {
    const writes = this.memory.take();
    if (writes.length === 0) {
      fn();
      return;
    }
    void this.ctx.store
      .commitMemory(this.activation, writes)
      .then(fn, (error) => this.settle({ kind: 'crashed', error }));
  }

  private checkBlocked(): void {
    // After the code's pending microtasks ran: blocked only if it made no further call meanwhile.
    setImmediate(() => {
      if (this.busy === 0 && this.pending > 0) this.afterWork(() => this.settle({ kind: 'blocked' }));
    });
  }
}
