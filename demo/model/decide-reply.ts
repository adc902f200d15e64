import { composeAnswer } from './compose-answer.js';
import { fillArguments } from './fill-arguments.js';
import { namedCallables } from './named-callables.js';
import type { ChatRequest } from './parse-chat-request.js';
import { type PlannedToolCall, planDelegations } from './plan-delegations.js';

/** The demo model's reply: tool calls to make, or a final text. */
export type DemoReply = { type: 'tool_calls'; calls: PlannedToolCall[] } | { type: 'final'; content: string };

/**
 * Decides the reply from the request alone (the demo model keeps no state). On the first turn — the
 * user's message is last and nothing has been answered yet — the callables the question names (or
 * all of them, asked to "use all tools") are called at once with arguments filled from their
 * schemas, so any agent a user writes runs offline; else a planner (offered `_subagent_` tools)
 * delegates the parts of the question in parallel, and a researcher (offered `search_docs`)
 * searches the documents with the question. Once tool results are in, or when there is nothing to
 * call, it answers from them.
 */
export function decideReply(request: ChatRequest): DemoReply {
  const { messages, tools } = request;
  const firstTurn = messages.at(-1)?.role === 'user' && !messages.some((m) => m.role === 'assistant');
  if (firstTurn) {
    const question = messages.at(-1)!.content;
    const named = namedCallables(question, tools);
    if (named.length > 0) {
      return {
        type: 'tool_calls',
        calls: named.map((t) => ({ name: t.name, args: fillArguments(t.parameters, question) })),
      };
    }
    if (tools.some((t) => t.name.startsWith('_subagent_'))) {
      return { type: 'tool_calls', calls: planDelegations(question, tools) };
    }
    // The publisher's one tool needs a human's approval (docs/guides/approvals-and-budgets.md): the call waits for it.
    if (tools.some((t) => t.name === 'publish_note')) {
      const title =
        question
          .split(/[.!?\n]/)[0]!
          .slice(0, 80)
          .trim() || 'Note';
      return { type: 'tool_calls', calls: [{ name: 'publish_note', args: { title, text: question } }] };
    }
    if (tools.some((t) => t.name === 'search_docs')) {
      return { type: 'tool_calls', calls: [{ name: 'search_docs', args: { query: question, k: 3 } }] };
    }
  }
  return { type: 'final', content: composeAnswer(messages) };
}
