import { modelCallId, toolCallId } from '../ids.js';
import type { AgentPlan } from '../plan/types.js';
import type { CallRecord } from '../wire/call-record.js';
import type { ChatMessage } from './chat-message.js';
import { judgeReply } from './decide-next-step.js';
import { subagentFailureText, toolFailureText, unknownToolText } from './failure-text.js';
import { initialMessages } from './initial-messages.js';

/**
 * The messages of model call `turn`, rebuilt from the call records of the turns before it: the
 * initial messages, then per turn the assistant reply and one tool message per call in the
 * model's order (ids are our call ids: providers don't guarantee theirs are unique), or, after a
 * refused final answer, the reason as a user message.
 */
export function buildConversation(
  agent: AgentPlan,
  input: unknown,
  records: ReadonlyMap<string, CallRecord>,
  turn: number,
  history: readonly Pick<ChatMessage, 'role' | 'content'>[] = [],
): ChatMessage[] {
  const messages = initialMessages(agent, input, history);
  for (let t = 0; t < turn; t++) {
    const reply = records.get(modelCallId(t))?.reply;
    if (!reply) break;
    if (reply.toolCalls.length === 0) {
      messages.push({ role: 'assistant', content: reply.content ?? '' });
      const verdict = judgeReply(agent, reply);
      if (!verdict.ok) messages.push({ role: 'user', content: retryPrompt(agent, verdict.reason) });
      continue;
    }
    const ids = reply.toolCalls.map((_, i) => toolCallId(t, i));
    messages.push({
      role: 'assistant',
      content: reply.content,
      tool_calls: reply.toolCalls.map((c, i) => ({
        id: ids[i]!,
        type: 'function' as const,
        function: { name: c.name, arguments: c.arguments },
      })),
    });
    reply.toolCalls.forEach((_, i) => {
      const record = records.get(ids[i]!);
      messages.push({ role: 'tool', tool_call_id: ids[i]!, content: record ? toolMessage(record) : '' });
    });
  }
  return messages;
}

/** The tool message content of a finished call record. */
export function toolMessage(record: CallRecord): string {
  // A rejected call's content is its rejection text (rejectionText), written with the decision.
  if (record.status === 'succeeded' || record.status === 'rejected') return record.content ?? '';
  const reason = record.error?.message;
  if (record.kind === 'subagent') return subagentFailureText(record.name, reason);
  if (record.error?.code === 'tool_not_found') return unknownToolText(record.name);
  return toolFailureText(record.name, reason);
}

function retryPrompt(agent: AgentPlan, reason: string): string {
  return `${reason} The final response should be json format, and match the schema ${JSON.stringify(agent.outputSchema)}`;
}
