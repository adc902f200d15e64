import { MeshError } from '../errors/mesh-error.js';
import { compareCallIds } from '../ids.js';
import { normalizeResult } from '../json/normalize-result.js';
import { toChatMessageContent } from '../json/to-chat-message-content.js';
import { truncateResult } from '../json/truncate-result.js';
import type { CallRecord } from '../wire/call-record.js';

/** What a fork asks for (docs/guides/durability.md): the call it runs from, and that call's result when given. */
export interface ForkPoint {
  fromCallId: string;
  /** Present when the request gave `result` (`null` is a given value). */
  result?: { value: unknown };
}

/** How a fork records: `code` for a code agent (results as JSON), the tool message bound (MESH_MAX_RESULT_BYTES). */
export interface ForkRecordOptions {
  code: boolean;
  now: string;
  maxResultBytes?: number;
}

/** The records a fork starts with: copies of the calls before its point, then the given result. */
export interface ForkRecords {
  reused: CallRecord[];
  given?: CallRecord;
}

/**
 * Decides which of a node's records a fork reuses (docs/guides/durability.md), purely: every call before
 * `fromCallId` in call order (a turn's model call, then its calls in the model's order), each
 * marked `reused` with its own timings, and, with a result, the call at the point itself as
 * `resultGiven`. Throws `call_not_found`, `invalid_input` (a result for a model call or a code
 * agent's approval), or `call_not_recorded` (the point without a result, or a call before it,
 * has no final outcome). `code` for a code agent, whose records encode results as JSON.
 */
export function planFork(
  calls: readonly CallRecord[],
  point: ForkPoint,
  opts: ForkRecordOptions,
): ForkRecords {
  const at = calls.find((r) => r.callId === point.fromCallId);
  if (!at) {
    throw new MeshError('call_not_found', `The invocation has no call with call id ${point.fromCallId}.`);
  }
  if (point.result && (at.kind === 'model' || isApproval(at))) {
    const what = at.kind === 'model' ? 'a model call' : 'an approval';
    throw new MeshError(
      'invalid_input',
      `A result can be given for a tool call or a delegation only; ${at.callId} is ${what}.`,
      [{ path: '/result', message: `must be absent: ${at.callId} is ${what}` }],
    );
  }
  const before = calls.filter((r) => compareCallIds(r.callId, at.callId) < 0);
  const open = [...before, ...(point.result ? [] : [at])].find((r) => !isFinal(r, opts.code));
  if (open) {
    throw new MeshError(
      'call_not_recorded',
      `Call ${open.callId} (${open.kind} ${open.name}) is ${open.status}, without a final recorded outcome, so a fork cannot reuse it${open === at ? ' or run from it' : ''}.`,
    );
  }
  const reused = before.map((r): CallRecord => ({ ...r, reused: true }));
  return point.result ? { reused, given: givenRecord(at, point.result.value, opts) } : { reused };
}

/** A code agent's `ctx.approval` record: its decision is its outcome. */
const isApproval = (r: CallRecord) => r.kind === 'tool' && r.name.startsWith('approval:');

/**
 * A call with an outcome a replay can answer from: succeeded, failed, rejected or cancelled (the
 * ReAct loop and code agents answer each); for a code agent's approval, `approved` too. Started
 * (in flight or in doubt), awaiting approval, or approved and not yet run is not.
 */
function isFinal(r: CallRecord, code: boolean): boolean {
  if (r.status === 'approved') return code && isApproval(r);
  return r.status !== 'started' && r.status !== 'awaiting_approval';
}

/**
 * The record of the call at the fork point with the result the request gave: succeeded at the
 * fork's own time, never run, no child. The value is what the model or the code gets: a ReAct
 * tool message (a string as is, anything else compact JSON, cut at `maxResultBytes` with the
 * visible marker as any result), a code agent's step result or
 * delegation output. A code agent's memory writes made before the call are kept (a step's made
 * while its fn ran are not: it did not run).
 */
function givenRecord(at: CallRecord, value: unknown, opts: ForkRecordOptions): CallRecord {
  const result = normalizeResult(value);
  const record: CallRecord = {
    v: 1,
    callId: at.callId,
    kind: at.kind,
    name: at.name,
    status: 'succeeded',
    startedAt: opts.now,
    finishedAt: opts.now,
    resultGiven: true,
    ...(at.providerId === undefined ? {} : { providerId: at.providerId }),
    // Truncated as a tool's or a child's result is (a step's JSON never is: runStep keeps it whole).
    content:
      opts.code && at.kind === 'tool'
        ? JSON.stringify(result)
        : truncateResult(toChatMessageContent(result), opts.maxResultBytes ?? Number.POSITIVE_INFINITY),
  };
  if (!opts.code) return record;
  if (at.kind === 'subagent') record.outputJson = JSON.stringify(result);
  const memory = at.memory?.slice(0, at.memoryBefore ?? at.memory.length);
  if (memory && memory.length > 0) record.memory = memory;
  return record;
}
