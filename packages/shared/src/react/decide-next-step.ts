import { codedError } from '../errors/coded-error.js';
import type { ErrorCode } from '../errors/error-codes.js';
import { modelCallId, toolCallId } from '../ids.js';
import { narrowToSchema, parseJsonObject } from '../json/index.js';
import { resolveCallableName } from '../plan/resolve-callable-name.js';
import type { AgentPlan, JsonSchema } from '../plan/types.js';
import type { CallRecord, ModelReply, ModelToolCall } from '../wire/call-record.js';
import type { CodedError } from '../wire/invocation-view.js';
import { boundedValidation } from './bounded-validation.js';
import { jsonDepth } from './json-depth.js';
import { stripFence } from './strip-fence.js';

/** Limits a ReAct invocation runs under (docs/architecture/durability-and-fencing.md). */
export interface StepLimits {
  /** This invocation's delegation depth (a root is 0). */
  depth: number;
  maxDepth: number;
  maxDelegationsPerTurn: number;
  /** Tool and sub-agent calls of one model reply that run; the rest fail `too_many_calls` (docs/reference/bounds.md). */
  maxCallsPerTurn: number;
}

/** One tool or sub-agent call of a model reply, as the executor must carry it out. */
export type PlannedCall =
  | { kind: 'tool'; callId: string; name: string; providerId: string; args: Record<string, unknown> }
  | { kind: 'subagent'; callId: string; name: string; providerId: string; args: Record<string, unknown> }
  /** A call that fails before it runs (unknown callable, bad arguments, a limit): recorded as is. */
  | { kind: 'tool' | 'subagent'; callId: string; name: string; providerId: string; failure: CodedError };

/** What the ReAct loop does next, decided purely from the agent and its call records. */
export type NextStep =
  | { type: 'call_model'; turn: number; callId: string }
  | { type: 'call_tools'; turn: number; calls: PlannedCall[] }
  | { type: 'final'; output: unknown }
  | { type: 'fail'; error: CodedError };

/** How many invalid final answers go back to the model before the invocation fails. */
export const MAX_OUTPUT_RETRIES = 2;

/** Decides the next step of a ReAct invocation from its records (a replay decides the same way). */
export function decideNextStep(
  agent: AgentPlan,
  records: ReadonlyMap<string, CallRecord>,
  limits: StepLimits,
): NextStep {
  let invalidAnswers = 0;
  for (let turn = 0; ; turn++) {
    const model = records.get(modelCallId(turn));
    if (model?.status !== 'succeeded' || !model.reply)
      return { type: 'call_model', turn, callId: modelCallId(turn) };
    const reply = model.reply;
    const lastTurn = turn + 1 >= agent.maxIterations;
    if (reply.toolCalls.length > 0) {
      // A finished turn is not planned again (its arguments not parsed again) at every step.
      if (reply.toolCalls.every((_, i) => isDone(records.get(toolCallId(turn, i))))) {
        if (lastTurn) return maxIterations(agent);
        continue;
      }
      const pending = planCalls(agent, reply.toolCalls, turn, limits).filter(
        (c) => !isDone(records.get(c.callId)),
      );
      if (pending.length > 0) {
        if (lastTurn) return maxIterations(agent);
        return { type: 'call_tools', turn, calls: pending };
      }
      if (lastTurn) return maxIterations(agent);
      continue;
    }
    const verdict = judgeReply(agent, reply);
    if (verdict.ok) return { type: 'final', output: verdict.output };
    invalidAnswers++;
    if (invalidAnswers > MAX_OUTPUT_RETRIES || lastTurn) {
      return { type: 'fail', error: codedError('invalid_output', verdict.reason) };
    }
  }
}

/**
 * A call is done once it has an outcome; a cancelled call is a failed one for the model, a rejected
 * one (docs/guides/approvals-and-budgets.md) is told so. A call awaiting approval, or approved and not yet run, is not done.
 */
const isDone = (r: CallRecord | undefined) =>
  r !== undefined && r.status !== 'started' && r.status !== 'awaiting_approval' && r.status !== 'approved';

const maxIterations = (agent: AgentPlan): NextStep => ({
  type: 'fail',
  error: codedError('max_iterations_exceeded', { limit: agent.maxIterations }),
});

/** A final answer judged: the output, or why it is refused. */
export type FinalVerdict = { ok: true; output: unknown } | { ok: false; reason: string };

const verdicts = new WeakMap<ModelReply, { schema: JsonSchema | null; verdict: FinalVerdict }>();

/**
 * judgeFinal of a recorded reply, once per reply object: the loop and the conversation re-read
 * every earlier answer at each step, and a hostile one may be megabytes long.
 */
export function judgeReply(agent: AgentPlan, reply: ModelReply): FinalVerdict {
  const known = verdicts.get(reply);
  if (known && known.schema === agent.outputSchema) return known.verdict;
  const verdict = judgeFinal(agent, reply.content ?? '');
  verdicts.set(reply, { schema: agent.outputSchema, verdict });
  return verdict;
}

/** Judges a final answer against the agent's output schema: the output, or why it is refused. */
export function judgeFinal(agent: AgentPlan, content: string): FinalVerdict {
  if (!agent.outputSchema) return { ok: true, output: content };
  let parsed: unknown;
  try {
    parsed = JSON.parse(stripFence(content));
  } catch (e) {
    return { ok: false, reason: `The final response is not valid JSON (${(e as Error).message}).` };
  }
  const problems = boundedValidation(agent.outputSchema, parsed, content.length);
  if (problems !== undefined) {
    return { ok: false, reason: `The final response does not match the schema: ${problems}` };
  }
  return { ok: true, output: narrowToSchema(parsed, agent.outputSchema) };
}

/** How deep a call's arguments may nest arrays and objects (as request bodies, docs/reference/bounds.md). */
export const MAX_ARGUMENT_DEPTH = 256;

/** Plans every call of one model reply in order, counting delegations and calls as it goes. */
function planCalls(
  agent: AgentPlan,
  calls: readonly ModelToolCall[],
  turn: number,
  limits: StepLimits,
): PlannedCall[] {
  let delegations = 0;
  return calls.map((call, i) => {
    const callId = toolCallId(turn, i);
    if (i >= limits.maxCallsPerTurn) return tooManyCalls(call, callId, limits.maxCallsPerTurn);
    const planned = planCall(agent, call, callId, limits, delegations);
    if (resolveCallableName(call.name).namespace === 'agent') delegations++;
    return planned;
  });
}

/** A call past the per-reply cap: failed without running, whatever it names. */
function tooManyCalls(call: ModelToolCall, callId: string, limit: number): PlannedCall {
  const target = resolveCallableName(call.name);
  return {
    kind: target.namespace === 'agent' ? 'subagent' : 'tool',
    name: target.name,
    callId,
    providerId: call.id,
    failure: codedError('too_many_calls', { limit }),
  };
}

function planCall(
  agent: AgentPlan,
  call: ModelToolCall,
  callId: string,
  limits: StepLimits,
  delegationsBefore: number,
): PlannedCall {
  const base = { callId, providerId: call.id };
  const { namespace, name } = resolveCallableName(call.name);
  const isSubagent = namespace === 'agent';
  const fail = (code: ErrorCode, message: string): PlannedCall => ({
    kind: isSubagent ? 'subagent' : 'tool',
    name,
    ...base,
    failure: { code, message },
  });
  if (isSubagent && !agent.subagents.includes(name)) {
    return fail('agent_not_found', `Sub-agent ${name} is not a declared sub-agent of ${agent.name}.`);
  }
  if (!isSubagent && !agent.tools.includes(name))
    return fail('tool_not_found', `Tool ${name} does not exist.`);
  // Refused before parsing: the arguments go on through JSON.stringify, which overflows the stack
  // at ~4,100 levels (the gateway bounds request bodies the same way).
  if (jsonDepth(call.arguments, MAX_ARGUMENT_DEPTH) > MAX_ARGUMENT_DEPTH) {
    return fail(
      'invalid_input',
      `INVALID_ARGUMENT /: the arguments nest deeper than ${MAX_ARGUMENT_DEPTH} levels`,
    );
  }
  const args = parseJsonObject(call.arguments);
  if (!args.ok) return fail('invalid_input', args.reason);
  if (!isSubagent) return { kind: 'tool', name, ...base, args: args.value };
  if (limits.depth + 1 > limits.maxDepth) {
    return fail('max_depth_exceeded', `Delegation depth limit ${limits.maxDepth} reached.`);
  }
  if (delegationsBefore >= limits.maxDelegationsPerTurn) {
    return fail(
      'too_many_delegations',
      `At most ${limits.maxDelegationsPerTurn} delegations are allowed in one turn.`,
    );
  }
  return { kind: 'subagent', name, ...base, args: args.value };
}
