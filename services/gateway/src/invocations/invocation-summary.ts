import { InvocationView, type JsonSchema } from '@agentmesh/shared';

/** One line of `GET /invocations`: an InvocationView of a root without input, output and calls. */
export type InvocationSummary = Omit<
  InvocationView,
  'input' | 'output' | 'calls' | 'parentId' | 'pendingApprovals'
>;

/** The hash fields a summary is decoded from (never `input` or `output`, which may be large). */
export const SUMMARY_FIELDS = [
  'v',
  'id',
  'agent',
  'status',
  'error',
  'rootId',
  'createdAt',
  'startedAt',
  'finishedAt',
  'deadline',
  'owner',
  'modelCalls',
  'promptTokens',
  'completionTokens',
  // treeUsage = own usage + these (rolled up as children finish): without them a summary's
  // treeUsage was its own usage only.
  'subModelCalls',
  'subPromptTokens',
  'subCompletionTokens',
  'forkedFrom',
] as const;

const DROPPED = new Set(['input', 'output', 'calls', 'parentId', 'pendingApprovals']);

/** The summary of a view (built without calls). */
export function toSummary(view: InvocationView): InvocationSummary {
  const {
    input: _input,
    output: _output,
    calls: _calls,
    parentId: _parentId,
    pendingApprovals: _pending,
    ...summary
  } = view;
  return summary;
}

/** The JSON Schema of a summary, derived from InvocationView's. */
export const InvocationSummarySchema: JsonSchema = (() => {
  const view = JSON.parse(JSON.stringify(InvocationView)) as {
    properties: Record<string, unknown>;
    required: string[];
  };
  return {
    type: 'object',
    description: 'A root invocation without input, output and calls: GET /invocations/{id} has them.',
    properties: Object.fromEntries(Object.entries(view.properties).filter(([k]) => !DROPPED.has(k))),
    required: view.required.filter((k) => !DROPPED.has(k)),
  };
})();

/** The JSON Schema of a page of `GET /invocations`. */
export const InvocationPageSchema: JsonSchema = {
  type: 'object',
  properties: {
    items: { type: 'array', items: InvocationSummarySchema, description: 'Newest first.' },
    nextCursor: {
      type: 'string',
      description: 'Pass as `cursor` for the next page; absent on the last page.',
    },
  },
  required: ['items'],
};
