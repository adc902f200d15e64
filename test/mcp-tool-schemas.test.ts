// How an agent appears as an MCP tool and how its invocation answers a tools/call (issue 12,
// docs/guides/mcp.md): pure mappings, nothing running.
import type { AgentPlan, InvocationView } from '@agentmesh/shared';
import t from 'tap';
import { toolResult } from '../services/gateway/src/mcp/tool-result.js';
import { toolSchemas } from '../services/gateway/src/mcp/tool-schemas.js';

const agent = (inputSchema: AgentPlan['inputSchema'], outputSchema: AgentPlan['outputSchema']) =>
  ({ name: 'a', inputSchema, outputSchema }) as AgentPlan;
const view = (over: Partial<InvocationView>) =>
  ({ id: 'inv_0123456789abcdef0123456789abcdef', status: 'succeeded', ...over }) as InvocationView;

t.test('an object input schema is the tool input schema as it is', async (t) => {
  const input = { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] };
  t.strictSame(toolSchemas(agent(input, null)), { input, output: undefined, wrapped: false });
});

t.test('an agent without an input shape takes any object', async (t) => {
  t.strictSame(toolSchemas(agent(null, null)).input, { type: 'object' });
});

t.test('an input that is not an object is offered as {input}', async (t) => {
  const s = toolSchemas(agent({ type: 'array', items: { type: 'integer' } }, null));
  t.equal(s.wrapped, true);
  t.strictSame(s.input, {
    type: 'object',
    properties: { input: { type: 'array', items: { type: 'integer' } } },
    required: ['input'],
    additionalProperties: false,
  });
});

t.test('only an object output schema becomes the tool output schema', async (t) => {
  const out = { type: 'object', properties: { n: { type: 'integer' } } };
  t.strictSame(toolSchemas(agent(null, out)).output, out);
  t.equal(toolSchemas(agent(null, { type: 'string' })).output, undefined);
});

t.test('text, structured and other output answer as MCP content', async (t) => {
  const meta = { 'agentmesh/invocationId': 'inv_0123456789abcdef0123456789abcdef' };
  t.strictSame(toolResult(view({ output: 'hi' }), 300), {
    content: [{ type: 'text', text: 'hi' }],
    _meta: meta,
  });
  t.strictSame(toolResult(view({ output: { n: 1 } }), 300), {
    content: [{ type: 'text', text: '{"n":1}' }],
    structuredContent: { n: 1 },
    _meta: meta,
  });
  t.strictSame(toolResult(view({ output: [1, 2] }), 300), {
    content: [{ type: 'text', text: '[1,2]' }],
    _meta: meta,
  });
});

t.test(
  'failed, cancelled and unfinished invocations are isError results naming the invocation',
  async (t) => {
    const id = 'inv_0123456789abcdef0123456789abcdef';
    const failed = toolResult(
      view({ status: 'failed', error: { code: 'model_error', message: 'Bad.' } }),
      300,
    );
    t.equal(failed.isError, true);
    t.strictSame(failed.content, [{ type: 'text', text: `Invocation ${id} failed: model_error: Bad.` }]);
    const cancelled = toolResult(
      view({ status: 'cancelled', error: { code: 'cancelled', message: 'Gone.' } }),
      300,
    );
    t.strictSame(cancelled.content, [{ type: 'text', text: `Invocation ${id} cancelled: cancelled: Gone.` }]);
    const running = toolResult(view({ status: 'waiting' }), 5);
    t.equal(running.isError, true);
    t.strictSame(running.content, [
      {
        type: 'text',
        text: `Invocation ${id} is still waiting after 5 s; follow it at GET /invocations/${id}.`,
      },
    ]);
  },
);
