import {
  type ApprovalDecision,
  codedError,
  MeshError,
  normalizeResult,
  rootOf,
  type SubagentResult,
} from '@agentmesh/shared';
import { logApprovalRequest } from '../approvals/log-approval-request.js';
import { codeCallId, recordFailure, submitOne } from './code-agent-context.js';
import { depthRefusal, inputRefusal, stepError } from './code-agent-refusals.js';
import { never } from './replay-outcome.js';
import { ReplayRun } from './replay-run.js';
import { runStep } from './run-step.js';

/**
 * One execution of a code agent's `run` from the start. Durable calls are numbered in the order
 * the code makes them; a recorded one is answered from its record, a new one is recorded. The run
 * is `blocked` when nothing of ours is in flight and it waits on children that have not finished:
 * every call started together (Promise.all) has been submitted by then. Limits apply as to a
 * ReAct agent (docs/architecture/durability-and-fencing.md): the deadline ends the run (`failed`), a delegation past the depth limit
 * or a call past the per-turn limits is refused as data (recorded, so replays agree). Here are
 * the durable calls the code makes; the replay's course (settling, deadline, our own work in
 * flight, the records) is ReplayRun's (replay-run.ts).
 */
export class CodeAgentReplay extends ReplayRun {
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
}
