// The demo's tools, served by the tool-host (mesh.yaml: `tools: [./demo/tools/index.ts]`, compiled to
// ./demo/tools/index.js in the production image, where DEMO_TOOLS names that).
import { defineTool } from '@agentmesh/shared';
import { evaluateExpression, MAX_EXPRESSION_LENGTH } from './evaluate-expression.js';
import { type SearchHit, searchCorpus } from './search-corpus.js';

/** Evaluates an arithmetic expression exactly as written, without ever calling eval. */
export const calculator = defineTool<{ expression: string }, { expression: string; result: number }>({
  name: 'calculator',
  description:
    'Evaluates an arithmetic expression and returns its numeric result. Supports + - * / % (modulo), ' +
    '^ (power), parentheses, decimals and unary minus, e.g. "(3 + 4.5) * -2 ^ 2". No variables or functions.',
  input: {
    type: 'object',
    properties: {
      expression: {
        type: 'string',
        minLength: 1,
        maxLength: MAX_EXPRESSION_LENGTH,
        description: 'The arithmetic expression to evaluate, e.g. "12 * (3 + 4) / 7".',
      },
    },
    required: ['expression'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: { expression: { type: 'string' }, result: { type: 'number' } },
    required: ['expression', 'result'],
  },
  idempotent: true,
  timeoutMs: 1000,
  run: ({ expression }) => ({ expression, result: evaluateExpression(expression) }),
});

/** Finds the demo documents (demo/docs/*.md) that best match a query, by term overlap. */
export const searchDocs = defineTool<{ query: string; k?: number }, SearchHit[]>({
  name: 'search_docs',
  description:
    'Searches a small library of technical notes (Redis persistence, BullMQ flows, the ReAct pattern, ' +
    'OpenAPI, Server-Sent Events, idempotency keys, retries with backoff, JSON Schema) and returns the ' +
    'best-matching documents with a relevant excerpt. Cite the titles you use.',
  input: {
    type: 'object',
    properties: {
      query: {
        type: 'string',
        minLength: 1,
        maxLength: 1000,
        description: 'What to look for, in plain words.',
      },
      k: {
        type: 'integer',
        minimum: 1,
        maximum: 5,
        description: 'How many documents to return (default 3).',
      },
    },
    required: ['query'],
    additionalProperties: false,
  },
  idempotent: true,
  timeoutMs: 5000,
  run: ({ query, k }) => searchCorpus(query, k ?? 3),
});

/**
 * Publishes a note to the team's notice board — simulated: it only says what it would post. Every
 * call waits for a human's approval first (`needsApproval`, docs/guides/approvals-and-budgets.md).
 */
export const publishNote = defineTool<{ title: string; text: string }, { published: true; title: string }>({
  name: 'publish_note',
  description:
    "Publishes a short note to the team's notice board (simulated). A human approves every publication.",
  input: {
    type: 'object',
    properties: {
      title: { type: 'string', minLength: 1, maxLength: 200, description: 'The headline of the note.' },
      text: { type: 'string', minLength: 1, maxLength: 4000, description: 'The body of the note.' },
    },
    required: ['title', 'text'],
    additionalProperties: false,
  },
  needsApproval: true,
  timeoutMs: 1000,
  run: ({ title }) => ({ published: true, title }),
});
