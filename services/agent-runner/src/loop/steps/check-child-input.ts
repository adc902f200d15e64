import { type AgentPlan, boundedValidation, codedError, DEFAULT_INPUT_SCHEMA } from '@agentmesh/shared';

/**
 * A ReAct child validates its input; an invalid one is a child failure that never calls the model.
 * The parent runs the same check when it submits the child, so a valid child's first activation
 * may record its model call with ACTIVATE (the child's hash says `inputChecked`).
 */
export function checkChildInput(agent: AgentPlan, input: unknown) {
  // The input is the parent model's arguments: judged with work bounded by their size.
  const problems = boundedValidation(agent.inputSchema!, input, JSON.stringify(input ?? null).length);
  if (problems === undefined) return undefined;
  const isDefault = JSON.stringify(agent.inputSchema) === JSON.stringify(DEFAULT_INPUT_SCHEMA);
  const message = isDefault
    ? "ReAct sub-agent input must be an object containing only a string 'prompt'."
    : `Invalid input: ${problems}`;
  return { error: codedError('invalid_input', message) };
}
