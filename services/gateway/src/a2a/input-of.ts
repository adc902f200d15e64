import type { Message } from '@a2a-js/sdk';
import { RequestMalformedError } from '@a2a-js/sdk/errors';
import { type AgentPlan, compileSchema, describeValidation } from '@agentmesh/shared';

/**
 * The agent input a message carries (docs/guides/a2a-and-remote-agents.md): a data part is the structured input; else its
 * text parts, joined, are the prompt of the default `{prompt}` schema. Input that fails the
 * agent's schema is a malformed request (JSON-RPC -32602) naming each problem.
 */
export function inputOf(agent: AgentPlan, message: Message | undefined): unknown {
  const parts = message?.parts ?? [];
  const data = parts.find((p) => p.content?.$case === 'data')?.content;
  const texts = parts.flatMap((p) => (p.content?.$case === 'text' ? [p.content.value] : []));
  if (!data && texts.length === 0)
    throw new RequestMalformedError('invalid_input: the message has no text or data part.');
  const input = data ? data.value : { prompt: texts.join('\n') };
  if (agent.inputSchema) {
    const verdict = compileSchema(agent.inputSchema)(input);
    if (!verdict.ok) throw new RequestMalformedError(`invalid_input: ${describeValidation(verdict.details)}`);
  }
  return input;
}
