import type { AgentConfig } from '../config/types.js';
import { declaredSchema, pickDeclaration } from './declared-schema.js';
import { defaultInputSchema } from './default-input-schema.js';
import type { CodeAgentShape, JsonSchema } from './types.js';

/**
 * The input schema an agent exposes (to the gateway and to parents' models). ReAct: its `input`,
 * else the default prompt schema. Code: the first explicit one of config `input`, the module's
 * `inputSchema`, the module's `input`; else the one TypeBox type among them, derived; else null
 * (no shape). Throws `invalid_config` for a declaration that does not build.
 */
export function effectiveInputSchema(agent: AgentConfig, code?: CodeAgentShape): JsonSchema | null {
  if (agent.module === undefined) {
    return agent.input === undefined || agent.input === null
      ? defaultInputSchema()
      : declaredSchema(agent.input, 'input');
  }
  const chosen = pickDeclaration([agent.input, code?.inputSchema, code?.input]);
  return chosen === undefined ? null : declaredSchema(chosen, 'input');
}

/** The output schema an agent declares (config `output`, else a code module's `output`); null = none. */
export function effectiveOutputSchema(agent: AgentConfig, code?: CodeAgentShape): JsonSchema | null {
  const chosen = pickDeclaration(agent.module === undefined ? [agent.output] : [agent.output, code?.output]);
  return chosen === undefined ? null : declaredSchema(chosen, 'output');
}
