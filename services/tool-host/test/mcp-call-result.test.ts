import t from 'tap';
import { mcpCallResult } from '../src/mcp/mcp-call-result.js';

t.test('structuredContent is the result when present, whatever the text says', async (t) => {
  t.strictSame(
    mcpCallResult({ content: [{ type: 'text', text: '{"sum": 3}' }], structuredContent: { sum: 3 } }),
    { sum: 3 },
  );
});

t.test(
  'without structuredContent the text contents are joined by newlines, other contents dropped',
  async (t) => {
    t.equal(
      mcpCallResult({
        content: [
          { type: 'text', text: 'one' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'file:///a.txt', text: 'two' } },
          { type: 'text', text: 'three' },
        ],
      }),
      'one\ntwo\nthree',
    );
    t.equal(mcpCallResult({ content: [] }), '', 'no content is an empty text');
  },
);

t.test('isError is a failed tool call with its text as the reason', async (t) => {
  t.throws(
    () =>
      mcpCallResult({
        content: [{ type: 'text', text: 'disk full' }],
        structuredContent: { x: 1 },
        isError: true,
      }),
    { code: 'tool_failed', message: 'disk full' },
  );
  t.throws(() => mcpCallResult({ content: [], isError: true }), {
    code: 'tool_failed',
    message: 'the MCP tool reported an error without a reason',
  });
});
