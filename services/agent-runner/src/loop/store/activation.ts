import type { CallRecord, InvocationState, TreeTexts } from '@agentmesh/shared';

// What one activation of an invocation holds, and what its store writes: the types of activation-store.ts.

/** Thrown when another activation took the invocation over: this one must stop writing at once. */
export class FencedOutError extends Error {
  constructor(id: string) {
    super(`Invocation ${id} was taken over by another activation.`);
    this.name = 'FencedOutError';
  }
}

/** A started activation: its epoch, recovery flag, state and call records. */
export interface Activation {
  epoch: number;
  recovered: boolean;
  state: InvocationState;
  records: Map<string, CallRecord>;
  /** Whether someone watched the tree's deltas when it was activated (its watch key existed). */
  watched: boolean;
  /** The call ACTIVATE recorded `started` along with the activation: its own write is skipped. */
  prestarted?: string;
  /** Deferred call records (`record(…, {defer: true})`): they go out ahead of the next write. */
  pending?: PendingRecord[];
}

/** A finished call record kept back to travel in the same round trip as the activation's next write. */
export interface PendingRecord {
  callId: string;
  /** The record as stored: its large texts referred to, and stored with it (`texts`). */
  recordJson: string;
  texts: TreeTexts;
  eventJson: string;
  usage: [modelCalls: number, promptTokens: number, completionTokens: number];
}

/** The part of an ioredis pipeline the store queues its Lua steps on. */
export type ScriptPipeline = Record<string, (...args: (string | number)[]) => unknown>;

/** A child to submit for a sub-agent call. */
export interface ChildSubmission {
  callId: string;
  record: CallRecord;
  agent: string;
  input: unknown;
  deadline: number;
  defHash: string;
  /** The parent checked the input against the child's schema: its first call may ride with ACTIVATE. */
  inputChecked?: boolean;
}
