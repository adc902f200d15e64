import { modelCallId, toolCallId } from '../ids.js';
import { compileSchema, describeValidation, narrowToSchema, parseJsonObject } from '../json/index.js';
import { type AgentPlan, SUBAGENT_PREFIX } from '../plan/types.js';
import type { CallRecord, ModelToolCall } from '../wire/call-record.js';
import type { CodedError } from '../wire/invocation-view.js';

/** Limits a ReAct invocation runs under (DESIGN §7). */
export interface StepLimits {
  /** This invocation's delegation depth (a root is 0). */
  depth: number;
  maxDepth: number;
  maxDelegationsPerTurn: number;
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
      const pending = reply.toolCalls
        .map((c, i) => planCall(agent, c, toolCallId(turn, i), limits, i, reply.toolCalls))
        .filter((c) => !isDone(records.get(c.callId)));
      if (pending.length > 0) {
        if (lastTurn) return maxIterations(agent);
        return { type: 'call_tools', turn, calls: pending };
      }
      if (lastTurn) return maxIterations(agent);
      continue;
    }
    const verdict = judgeFinal(agent, reply.content ?? '');
    if (verdict.ok) return { type: 'final', output: verdict.output };
    invalidAnswers++;
    if (invalidAnswers > MAX_OUTPUT_RETRIES || lastTurn) {
      return { type: 'fail', error: { code: 'invalid_output', message: verdict.reason } };
    }
  }
}

/** A call is done once it has an outcome; a cancelled call is a failed one for the model. */
const isDone = (r: CallRecord | undefined) => r !== undefined && r.status !== 'started';

const maxIterations = (agent: AgentPlan): NextStep => ({
  type: 'fail',
  error: {
    code: 'max_iterations_exceeded',
    message: `The agent reached its limit of ${agent.maxIterations} iterations.`,
  },
});

/** Judges a final answer against the agent's output schema: the output, or why it is refused. */
export function judgeFinal(
  agent: AgentPlan,
  content: string,
): { ok: true; output: unknown } | { ok: false; reason: string } {
  if (!agent.outputSchema) return { ok: true, output: content };
  let parsed: unknown;
  try {
    parsed = JSON.parse(stripFence(content));
  } catch (e) {
    return { ok: false, reason: `The final response is not valid JSON (${(e as Error).message}).` };
  }
  const result = compileSchema(agent.outputSchema)(parsed);
  if (!result.ok)
    return {
      ok: false,
      reason: `The final response does not match the schema: ${describeValidation(result.details)}`,
    };
  return { ok: true, output: narrowToSchema(parsed, agent.outputSchema) };
}

/** Models often wrap JSON in a ```json fence; the answer inside is what they meant. */
function stripFence(text: string): string {
  const m = /^\s*```(?:json)?\s*\n([\s\S]*?)\n\s*```\s*$/.exec(text);
  return m ? m[1]! : text;
}

function planCall(
  agent: AgentPlan,
  call: ModelToolCall,
  callId: string,
  limits: StepLimits,
  index: number,
  all: ModelToolCall[],
): PlannedCall {
  const base = { callId, providerId: call.id };
  const isSubagent = call.name.startsWith(SUBAGENT_PREFIX);
  const name = isSubagent ? call.name.slice(SUBAGENT_PREFIX.length) : call.name;
  const fail = (code: string, message: string): PlannedCall => ({
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
  const args = parseJsonObject(call.arguments);
  if (!args.ok) return fail('invalid_input', args.reason);
  if (!isSubagent) return { kind: 'tool', name, ...base, args: args.value };
  if (limits.depth + 1 > limits.maxDepth) {
    return fail('max_depth_exceeded', `Delegation depth limit ${limits.maxDepth} reached.`);
  }
  const delegationsBefore = all.slice(0, index).filter((c) => c.name.startsWith(SUBAGENT_PREFIX)).length;
  if (delegationsBefore >= limits.maxDelegationsPerTurn) {
    return fail(
      'too_many_delegations',
      `At most ${limits.maxDelegationsPerTurn} delegations are allowed in one turn.`,
    );
  }
  return { kind: 'subagent', name, ...base, args: args.value };
}
