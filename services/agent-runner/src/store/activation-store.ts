import {
  type CallRecord,
  compareCallIds,
  decodeCalls,
  decodeInvocation,
  encodeEvent,
  encodeNewInvocation,
  finishArgs,
  type InvocationState,
  type KeyLayout,
  MeshError,
  type MeshEventType,
  type MeshScripts,
  type Outcome,
} from '@agentmesh/shared';
import type { Redis } from 'ioredis';

/** Thrown when another activation took the invocation over: this one must stop writing at once. */
export class FencedOutError extends Error {
  constructor(id: string) {
    super(`Invocation ${id} was taken over by another activation.`);
    this.name = 'FencedOutError';
  }
}

const NO_USAGE = { modelCalls: 0, promptTokens: 0, completionTokens: 0 };

const pairs = (flat: string[]): Record<string, string> => {
  const o: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) o[flat[i]!] = flat[i + 1]!;
  return o;
};

/** A started activation: its epoch, recovery flag, state and call records. */
export interface Activation {
  epoch: number;
  recovered: boolean;
  state: InvocationState;
  records: Map<string, CallRecord>;
}

/** A child to submit for a sub-agent call. */
export interface ChildSubmission {
  callId: string;
  record: CallRecord;
  agent: string;
  input: unknown;
  deadline: number;
  defHash: string;
}

/** Every state change one activation makes, each one Lua step fenced by the activation's epoch. */
export class ActivationStore {
  constructor(
    private readonly redis: Redis,
    private readonly scripts: MeshScripts,
    private readonly keys: KeyLayout,
    private readonly retentionSeconds: number,
  ) {}

  /** Takes a new epoch and loads state and records; undefined when the invocation is gone. */
  async activate(id: string, rootId: string, runner: string): Promise<Activation | undefined> {
    const res = (await this.scripts.activate(
      this.keys.invocation(rootId, id),
      this.keys.calls(rootId, id),
      this.keys.events(rootId),
      Date.now(),
      runner,
      new Date().toISOString(),
    )) as [number, number, string[], string[]] | null;
    if (!res) return undefined;
    const [epoch, recovered, stateFlat, callsFlat] = res;
    const records = new Map(decodeCalls(pairs(callsFlat)).map((r) => [r.callId, r]));
    return { epoch, recovered: recovered === 1, state: decodeInvocation(pairs(stateFlat)), records };
  }

  /** Re-reads the call records (children write their parent's records when they finish). */
  async reloadRecords(state: InvocationState): Promise<Map<string, CallRecord>> {
    const flat = await this.redis.hgetall(this.keys.calls(state.rootId, state.id));
    return new Map(decodeCalls(flat).map((r) => [r.callId, r]));
  }

  /**
   * Writes a call record (and usage), appending an event; throws FencedOutError when fenced out.
   * Recording a call as `started` also checks the cancel flag (no extra round trip): a cancelled
   * invocation starts no further call, and this throws MeshError('cancelled').
   */
  async record(
    a: Activation,
    record: CallRecord,
    event?: { type: MeshEventType; data: unknown },
    usage: { modelCalls: number; promptTokens: number; completionTokens: number } = NO_USAGE,
    memoryWrites: [key: string, valueJson: string][] = [],
  ): Promise<void> {
    const s = a.state;
    const ok = await this.scripts.recordCall(
      this.keys.invocation(s.rootId, s.id),
      this.keys.calls(s.rootId, s.id),
      this.keys.events(s.rootId),
      this.keys.memory(s.rootId, s.id),
      a.epoch,
      record.callId,
      JSON.stringify(record),
      event ? encodeEvent(s, event.type, event.data) : '',
      usage.modelCalls,
      usage.promptTokens,
      usage.completionTokens,
      record.status === 'started' ? '1' : '0',
      ...memoryWrites.flat(),
    );
    if (ok === 2) throw new MeshError('cancelled', 'The invocation was cancelled.');
    if (ok !== 1) throw new FencedOutError(s.id);
    a.records.set(record.callId, record);
  }

  /** Records each sub-agent call `started` and creates its child invocation, in one pipeline. */
  async submitChildren(a: Activation, children: ChildSubmission[]): Promise<void> {
    const s = a.state;
    const pipeline = this.redis.pipeline();
    const host = pipeline as unknown as Record<string, (...args: unknown[]) => unknown>;
    for (const c of children) {
      const id = c.record.childId!;
      host.mesh_submitChild!.call(
        pipeline,
        this.keys.invocation(s.rootId, s.id),
        this.keys.calls(s.rootId, s.id),
        this.keys.invocation(s.rootId, id),
        this.keys.events(s.rootId),
        a.epoch,
        c.callId,
        JSON.stringify(c.record),
        encodeEvent(s, 'delegation_started', { callId: c.callId, subagent: c.agent, childId: id }),
        ...encodeNewInvocation({
          id,
          agent: c.agent,
          input: c.input,
          rootId: s.rootId,
          parentId: s.id,
          parentCallId: c.callId,
          parentAgent: s.agent,
          depth: s.depth + 1,
          createdAt: Date.now(),
          deadline: c.deadline,
          defHash: c.defHash,
          ...(s.owner ? { owner: s.owner } : {}),
          ...(s.traceparent ? { traceparent: s.traceparent } : {}),
        }),
      );
    }
    const results = (await pipeline.exec()) ?? [];
    for (const [err, value] of results) {
      if (err) throw err;
      if (value === 0) throw new FencedOutError(s.id);
    }
    for (const c of children) if (!a.records.has(c.callId)) a.records.set(c.callId, c.record);
  }

  /** Marks the invocation `waiting` before it releases its worker slot (`running` if it stays). */
  async park(a: Activation, status: 'waiting' | 'running' | 'queued' = 'waiting'): Promise<void> {
    const s = a.state;
    const ok = await this.scripts.park(
      this.keys.invocation(s.rootId, s.id),
      this.keys.events(s.rootId),
      a.epoch,
      status,
      new Date().toISOString(),
    );
    if (ok !== 1) throw new FencedOutError(a.state.id);
  }

  /**
   * Writes the terminal state once; for a delegation also completes the parent's call record with
   * the tool message content (success) or the error (failure). `epoch` undefined = unfenced (a
   * parent failing a lost child). Returns false when it was terminal already.
   */
  async finish(s: InvocationState, epoch: number | undefined, outcome: Outcome): Promise<boolean> {
    const ret = await this.scripts.finish(...finishArgs(this.keys, s, epoch, outcome, this.retentionSeconds));
    if (ret !== 1 && epoch !== undefined) {
      const status = await this.redis.hget(this.keys.invocation(s.rootId, s.id), 'status');
      if (status !== 'succeeded' && status !== 'failed' && status !== 'cancelled')
        throw new FencedOutError(s.id);
    }
    return ret === 1;
  }

  /** Commits a code agent's memory writes; throws FencedOutError when fenced out. */
  async commitMemory(a: Activation, writes: [key: string, valueJson: string][]): Promise<void> {
    const s = a.state;
    const ok = await this.scripts.commitMemory(
      this.keys.invocation(s.rootId, s.id),
      this.keys.memory(s.rootId, s.id),
      a.epoch,
      ...writes.flat(),
    );
    if (ok !== 1) throw new FencedOutError(s.id);
  }

  /** Discards the records from `callId` on (in call order): they no longer match the code. */
  async discardFrom(a: Activation, callId: string): Promise<void> {
    const s = a.state;
    const stale = [...a.records.keys()].filter((id) => compareCallIds(id, callId) >= 0);
    const ok = await this.scripts.discardCalls(
      this.keys.invocation(s.rootId, s.id),
      this.keys.calls(s.rootId, s.id),
      a.epoch,
      ...stale,
    );
    if (ok !== 1) throw new FencedOutError(s.id);
    for (const id of stale) a.records.delete(id);
  }

  /** Reads one invocation's state (a child, when its parent checks on it). */
  async readState(rootId: string, id: string): Promise<InvocationState | undefined> {
    const h = await this.redis.hgetall(this.keys.invocation(rootId, id));
    return Object.keys(h).length === 0 ? undefined : decodeInvocation(h);
  }
}
