import {
  type AgentPlan,
  type ApprovalDecision,
  type CallRecord,
  type CodedError,
  type JobData,
  type LoadedCodeAgent,
  MeshError,
  type SubagentResult,
} from '@agentmesh/shared';
import type { Job } from 'bullmq';
import type { Activation } from '../../store/activation-store.js';
import type { AgentRun } from '../agent-run.js';
import type { RunnerContext } from '../runner-context.js';
import { CallBatch } from './call-batch.js';
import { agentContext } from './code-agent-context.js';
import { refusedRecord } from './code-agent-refusals.js';
import { ReplayMemory } from './replay-memory.js';
import { DEADLINE_EXCEEDED, never, type ReplayOutcome } from './replay-outcome.js';

// setTimeout's longest delay; deadlines are bounded far below it (MESH_MAX_TIMEOUT_SECONDS).
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The course of one replay of a code agent (code-agent-replay.ts has its durable calls): how it
 * settles (returned, threw, blocked, failed past its deadline, crashed on our own work), our own
 * durable work in flight told apart from calls that wait on others, and the records a call is
 * answered from (one of another call means the code is not deterministic) or refused with.
 */
export abstract class ReplayRun {
  protected seq = 0;
  private busy = 0;
  protected pending = 0;
  /** Of `pending`: the children submitted, and the approvals asked for (docs/guides/approvals-and-budgets.md). */
  children = 0;
  approvals = 0;
  protected settled = false;
  private settle: (o: ReplayOutcome) => void = () => undefined;
  protected readonly batch: CallBatch;
  private readonly expiry = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  /** `ctx.memory`: this invocation's own; writes are committed with the next durable record. */
  readonly memory = new ReplayMemory();

  protected readonly ctx: RunnerContext;
  protected readonly agent: AgentPlan;
  protected readonly activation: Activation;
  protected readonly job: Job<JobData>;
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

  /** `ctx.subagent`, `ctx.step` and `ctx.approval`: the durable calls the agent's code makes. */
  abstract subagent(name: string, input: unknown): Promise<SubagentResult>;
  abstract step<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
  abstract approval(name: string, payload: unknown): Promise<ApprovalDecision>;

  /** The record at `callId` if it is the same call; a different one means the code is not deterministic. */
  protected async recorded(
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
  protected async refuse(callId: string, kind: CallRecord['kind'], name: string, error: CodedError) {
    const writes = this.memory.take();
    const record = refusedRecord({ callId, kind, name, error, runner: this.ctx.runnerId, memory: writes });
    const event = { type: 'tool_call' as const, data: { callId, name, status: 'failed', error } };
    await this.ctx.store.record(this.activation, record, event, undefined, writes);
  }

  /** A result reaches the code: calls it makes next are a new batch. */
  protected deliver<T>(value: T): T {
    this.batch.reset();
    return value;
  }

  /** True (and the run ends `deadline_exceeded`) when no new call may start any more. */
  protected overdue(): boolean {
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
  protected async system<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.track(fn);
    } catch (error) {
      this.settle({ kind: 'crashed', error });
      return never();
    }
  }

  /** Counts our own work in flight, so a run waiting on it is not taken for blocked. */
  protected async track<T>(fn: () => Promise<T>): Promise<T> {
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

  protected checkBlocked(): void {
    // After the code's pending microtasks ran: blocked only if it made no further call meanwhile.
    setImmediate(() => {
      if (this.busy === 0 && this.pending > 0) this.afterWork(() => this.settle({ kind: 'blocked' }));
    });
  }
}
