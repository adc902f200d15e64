import { MeshError } from '@agentmesh/shared';
import t from 'tap';
import { parseChatCompletion } from '../src/loop/model/parse-chat-completion.js';

const reply = (message: unknown, extra: object = {}) => JSON.stringify({ choices: [{ message }], ...extra });
const refusal = (text: string): MeshError => {
  try {
    parseChatCompletion(text);
  } catch (e) {
    if (e instanceof MeshError) return e;
    throw e;
  }
  throw new Error('expected the reply to be refused');
};

t.test('a text answer becomes content with no tool calls and its token usage', async (t) => {
  const text = reply(
    { role: 'assistant', content: 'The answer is 42.' },
    { usage: { prompt_tokens: 12, completion_tokens: 5 } },
  );
  t.strictSame(parseChatCompletion(text), {
    content: 'The answer is 42.',
    toolCalls: [],
    usage: { promptTokens: 12, completionTokens: 5 },
  });
});

t.test('tool calls keep their id, name and the raw argument text as the model wrote it', async (t) => {
  const raw = '{ "path": "a.txt",  "lines": [1, 2] }';
  const parsed = parseChatCompletion(
    reply({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_A', type: 'function', function: { name: 'read_file', arguments: raw } },
        { id: 'call_B', type: 'function', function: { name: 'broken', arguments: '{"path": ' } },
      ],
    }),
  );
  t.strictSame(parsed.toolCalls, [
    { id: 'call_A', name: 'read_file', arguments: raw },
    { id: 'call_B', name: 'broken', arguments: '{"path": ' },
  ]);
  t.equal(parsed.content, null);
});

t.test('object arguments are accepted and stringified; absent ones become {}', async (t) => {
  const parsed = parseChatCompletion(
    reply({
      content: null,
      tool_calls: [
        { function: { name: 'lookup', arguments: { word: 'mesh', n: 2 } } },
        { function: { name: 'ping' } },
      ],
    }),
  );
  t.strictSame(parsed.toolCalls, [
    { id: '', name: 'lookup', arguments: '{"word":"mesh","n":2}' },
    { id: '', name: 'ping', arguments: '{}' },
  ]);
});

t.test('missing or non-numeric usage counts as zero tokens', async (t) => {
  t.strictSame(parseChatCompletion(reply({ content: 'x' })).usage, { promptTokens: 0, completionTokens: 0 });
  const odd = reply({ content: 'x' }, { usage: { prompt_tokens: '9', completion_tokens: 3.7 } });
  t.strictSame(parseChatCompletion(odd).usage, { promptTokens: 0, completionTokens: 3 });
});

t.test('a reply that is not JSON is refused', async (t) => {
  const e = refusal('<html>Bad Gateway</html>');
  t.equal(e.code, 'invalid_model_reply');
  t.equal(e.message, 'The model reply is malformed: not JSON');
});

t.test('a reply without choices is refused', async (t) => {
  for (const text of ['{}', '{"choices":[]}', '{"choices":[{}]}', 'null', '{"choices":[{"message":"hi"}]}']) {
    const e = refusal(text);
    t.equal(e.code, 'invalid_model_reply', text);
    t.equal(e.message, 'The model reply is malformed: no choices[0].message', text);
  }
});

t.test('content that is not a string is refused', async (t) => {
  for (const content of [42, ['a'], { text: 'a' }, true]) {
    const e = refusal(reply({ content }));
    t.equal(e.code, 'invalid_model_reply');
    t.equal(e.message, 'The model reply is malformed: choices[0].message.content is not a string');
  }
});

t.test('a tool call without a name is refused, naming the call', async (t) => {
  const calls = [{ function: { name: 'ok', arguments: '{}' } }, { id: 'x', function: { arguments: '{}' } }];
  const e = refusal(reply({ content: null, tool_calls: calls }));
  t.equal(e.code, 'invalid_model_reply');
  t.equal(e.message, 'The model reply is malformed: choices[0].message.tool_calls[1].function.name');
  t.equal(
    refusal(reply({ content: null, tool_calls: [{ function: { name: '' } }] })).code,
    'invalid_model_reply',
  );
  t.equal(refusal(reply({ content: null, tool_calls: [null] })).code, 'invalid_model_reply');
});

t.test('tool_calls that are not a list are refused', async (t) => {
  for (const tool_calls of [{ function: { name: 'x' } }, 'read_file', 3]) {
    const e = refusal(reply({ content: null, tool_calls }));
    t.equal(e.code, 'invalid_model_reply');
    t.equal(e.message, 'The model reply is malformed: choices[0].message.tool_calls is not a list');
  }
});

t.test('a null tool_calls is an answer without tool calls', async (t) => {
  t.strictSame(parseChatCompletion(reply({ content: 'done', tool_calls: null })).toolCalls, []);
});

t.test('object arguments nested too deeply to stringify make the reply malformed, not a crash', async (t) => {
  const deep = `${'['.repeat(200_000)}${']'.repeat(200_000)}`;
  const text = `{"choices":[{"message":{"content":null,"tool_calls":[{"id":"a","function":{"name":"x","arguments":${deep}}}]}}]}`;
  const e = refusal(text);
  t.equal(e.code, 'invalid_model_reply');
  t.equal(
    e.message,
    'The model reply is malformed: choices[0].message.tool_calls[0].function.arguments nest too deeply',
  );
});
