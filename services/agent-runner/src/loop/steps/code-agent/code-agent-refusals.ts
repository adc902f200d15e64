import { type CallRecord, type CodedError, codedError, MeshError } from '@agentmesh/shared';
import type { MemoryWrites } from './replay-memory.js';

/** A delegation's input must be a JSON object, as a model's `_subagent_` arguments are. */
export function inputRefusal(name: string, input: unknown): CodedError | undefined {
  if (typeof input === 'object' && input !== null && !Array.isArray(input)) return undefined;
  return codedError('invalid_input', `ctx.subagent('${name}', input): the input must be a JSON object.`);
}

/** A delegation from an invocation at `depth` past MESH_MAX_DEPTH (the ReAct planner's text). */
export function depthRefusal(depth: number, maxDepth: number): CodedError | undefined {
  if (depth + 1 <= maxDepth) return undefined;
  return codedError('max_depth_exceeded', { limit: maxDepth });
}

/** The record of a call refused before it ran, with the memory writes committed with it. */
export function refusedRecord(r: {
  callId: string;
  kind: CallRecord['kind'];
  name: string;
  error: CodedError;
  runner: string;
  memory: MemoryWrites;
}): CallRecord {
  const now = new Date().toISOString();
  return {
    v: 1,
    callId: r.callId,
    kind: r.kind,
    name: r.name,
    status: 'failed',
    startedAt: now,
    finishedAt: now,
    runner: r.runner,
    error: r.error,
    ...(r.memory.length > 0 ? { memory: r.memory } : {}),
  };
}

/** What a replayed failed step throws: a refusal keeps its code, a failure of `fn` its message. */
export function stepError(record: CallRecord, name: string): Error {
  const e = record.error;
  if (e?.code === 'too_many_calls') return new MeshError(e.code, e.message);
  return new Error(e?.message ?? `step ${name} failed`);
}
