import {
  type AgentMemory,
  type AgentPlan,
  type CallRecord,
  type JobData,
  type LoadedCodeAgent,
  normalizeResult,
  type SubagentResult,
} from '@agentmesh/shared';
import type { Job } from 'bullmq';
import type { Activation } from '../store/activation-store.js';
import { agentContext, codeCallId, recordFailure, submitOne } from './run-code-agent.js';
import type { RunnerContext } from './runner-context.js';

/** How one replay of a code agent's run ended. */
export type ReplayOutcome =
  | { kind: 'returned'; value: unknown }
  | { kind: 'threw'; error: unknown }
  | { kind: 'blocked' };

/**
 * One execution of a code agent's `run` from the start. Durable calls are numbered in the order
 * the code makes them; a recorded one is answered from its record, a new one is recorded. The run
 * is `blocked` when nothing of ours is in flight and it waits on children that have not finished:
 * every call started together (Promise.all) has been submitted by then.
 */
export class CodeAgentReplay {
  private seq = 0;
  private busy = 0;
  private pending = 0;
  private settled = false;
  private settle: (o: ReplayOutcome) => void = () => undefined;
  private readonly values = new Map<string, unknown>();
  private writes: [string, string][] = [];

  constructor(
    private readonly ctx: RunnerContext,
    private readonly agent: AgentPlan,
    private readonly a: Activation,
    private readonly job: Job<JobData>,
    private readonly signal: AbortSignal,
  ) {}

  /** Runs the agent's code once, to its end or until it blocks on children. */
  run(def: LoadedCodeAgent): Promise<ReplayOutcome> {
    return new Promise((resolve) => {
      this.settle = (o) => {
        if (this.settled) return;
        this.settled = true;
        resolve(o);
      };
      const log = this.ctx.log;
      const context = agentContext(this, this.signal, log);
      Promise.resolve()
        .then(() => def.run(this.a.state.input, context))
        .then(
          (value) => this.afterWork(() => this.settle({ kind: 'returned', value })),
          (error) => this.settle({ kind: 'threw', error }),
        );
    });
  }

  /** `ctx.subagent(name, input)`: a child's result as data; never throws for a child's failure. */
  async subagent(name: string, input: unknown): Promise<SubagentResult> {
    const callId = codeCallId(this.seq++);
    if (!this.agent.subagents.includes(name)) {
      const message = `Sub-agent ${name} is not a declared sub-agent of ${this.agent.name}.`;
      return { ok: false, error: { code: 'agent_not_found', message } };
    }
    const record = await this.track(() => this.recorded(callId, 'subagent', name));
    if (record && record.status !== 'started') {
      if (record.status !== 'succeeded') return { ok: false, error: recordFailure(record) };
      const child = await this.track(() => this.ctx.store.readState(this.a.state.rootId, record.childId!));
      return { ok: true, output: child?.output };
    }
    if (!record)
      await this.track(() =>
        this.flushThen(() => submitOne(this.ctx, this.job, this.a, callId, name, input)),
      );
    this.pending++;
    this.checkBlocked();
    return new Promise<never>(() => undefined); // answered by a later replay, once the child is done
  }

  /** `ctx.step(name, fn)`: runs `fn` once; its JSON result is recorded and replayed. */
  async step<T>(name: string, fn: () => Promise<T> | T): Promise<T> {
    const callId = codeCallId(this.seq++);
    const label = `step:${name}`;
    const record = await this.track(() => this.recorded(callId, 'tool', label));
    if (record?.status === 'succeeded') return JSON.parse(record.content ?? 'null') as T;
    if (record?.status === 'failed') throw new Error(record.error?.message ?? `step ${name} failed`);
    return this.track(async () => {
      const started: CallRecord = {
        v: 1,
        callId,
        kind: 'tool',
        name: label,
        status: 'started',
        startedAt: new Date().toISOString(),
        runner: this.ctx.runnerId,
      };
      await this.ctx.store.record(this.a, started, undefined, undefined, this.takeWrites());
      const done = (outcome: Partial<CallRecord>) =>
        this.ctx.store.record(this.a, { ...started, ...outcome, finishedAt: new Date().toISOString() });
      let value: unknown;
      try {
        value = normalizeResult((await fn()) ?? null);
      } catch (e) {
        await done({
          status: 'failed',
          error: { code: 'agent_failed', message: (e as Error)?.message ?? String(e) },
        });
        throw e;
      }
      await done({ status: 'succeeded', content: JSON.stringify(value) });
      return value as T;
    });
  }

  /** `ctx.memory`: this invocation's own; writes are committed with the next durable record. */
  readonly memory: AgentMemory = {
    get: async <T>(key: string) => structuredClone(this.values.get(key)) as T | undefined,
    set: async (key, value) => {
      const json = normalizeResult(value ?? null);
      this.values.set(key, json);
      this.writes.push([key, JSON.stringify(json)]);
    },
    delete: async (key) => {
      this.values.delete(key);
      this.writes.push([key, '']);
    },
  };

  /** The record at `callId` if it is the same call; a different one means the code is not deterministic. */
  private async recorded(
    callId: string,
    kind: CallRecord['kind'],
    name: string,
  ): Promise<CallRecord | undefined> {
    const record = this.a.records.get(callId);
    if (!record || (record.kind === kind && record.name === name)) return record;
    const message = `Non-deterministic code agent ${this.agent.name}: call ${callId} was ${record.kind} ${record.name}, the code now makes ${kind} ${name}; the records from there on are discarded.`;
    this.ctx.log.warn({ invocationId: this.a.state.id, callId }, message);
    await this.ctx.store.discardFrom(this.a, callId);
    return undefined;
  }

  private takeWrites(): [string, string][] {
    const w = this.writes;
    this.writes = [];
    return w;
  }

  private async flushThen<T>(fn: () => Promise<T>): Promise<T> {
    const writes = this.takeWrites();
    if (writes.length > 0) await this.ctx.store.commitMemory(this.a, writes);
    return fn();
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
    const writes = this.takeWrites();
    if (writes.length === 0) {
      fn();
      return;
    }
    void this.ctx.store
      .commitMemory(this.a, writes)
      .then(fn, (error) => this.settle({ kind: 'threw', error }));
  }

  private checkBlocked(): void {
    // After the code's pending microtasks ran: blocked only if it made no further call meanwhile.
    setImmediate(() => {
      if (this.busy === 0 && this.pending > 0) this.afterWork(() => this.settle({ kind: 'blocked' }));
    });
  }
}
