// buildConversation rebuilds what model call `turn` is sent from the recorded calls alone.
import t from 'tap';
import { toolCallId } from '../src/ids.js';
import { buildConversation, toolMessage } from '../src/react/build-conversation.js';
import type { ChatMessage } from '../src/react/chat-message.js';
import { callRecord, history, modelReply, reactAgent } from './fixtures/react/recorded-calls.js';

const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] };
const schemaPrompt = `The final response should be json format, and match the schema ${JSON.stringify(schema)}`;

t.test('each recorded history gives the messages of the next model call', async (t) => {
  const rows: {
    name: string;
    instructions?: string;
    outputSchema?: typeof schema;
    records: ReturnType<typeof history>;
    turn: number;
    messages: ChatMessage[];
  }[] = [
    {
      name: 'the first call: instructions, then the input as JSON',
      instructions: 'Be brief.',
      records: history(),
      turn: 0,
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: '{"q":1}' },
      ],
    },
    {
      name: 'a turn of two calls: the reply, then one tool message each in the model order',
      records: history(
        modelReply(0, [
          ['clock', '{}'],
          ['_subagent_helper', '{"prompt":"p"}'],
        ]),
        callRecord(0, 0, 'clock', { content: '12:00' }),
        callRecord(0, 1, 'helper', { error: { code: 'subagent_failed', message: 'boom' } }, 'subagent'),
      ),
      turn: 1,
      messages: [
        { role: 'user', content: '{"q":1}' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: toolCallId(0, 0), type: 'function', function: { name: 'clock', arguments: '{}' } },
            {
              id: toolCallId(0, 1),
              type: 'function',
              function: { name: '_subagent_helper', arguments: '{"prompt":"p"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: toolCallId(0, 0), content: '12:00' },
        {
          role: 'tool',
          tool_call_id: toolCallId(0, 1),
          content: 'Sub-agent _subagent_helper execute failed: boom',
        },
      ],
    },
    {
      name: 'a refused final answer goes back with the reason as a user message',
      outputSchema: schema,
      records: history(modelReply(0, '{}')),
      turn: 1,
      messages: [
        { role: 'system', content: schemaPrompt },
        { role: 'user', content: '{"q":1}' },
        { role: 'assistant', content: '{}' },
        {
          role: 'user',
          content: `The final response does not match the schema: /answer: must have required property 'answer' ${schemaPrompt}`,
        },
      ],
    },
  ];
  for (const row of rows) {
    const agent = reactAgent({
      ...(row.instructions ? { instructions: row.instructions } : {}),
      outputSchema: row.outputSchema ?? null,
    });
    t.match(buildConversation(agent, { q: 1 }, row.records, row.turn), row.messages, row.name);
    t.equal(buildConversation(agent, { q: 1 }, row.records, row.turn).length, row.messages.length, row.name);
  }
});

t.test('a failed call gives the model the wording of its kind', async (t) => {
  const rows: [name: string, record: ReturnType<typeof callRecord>, text: string][] = [
    ['a result', callRecord(0, 0, 'clock', { content: 'ok' }), 'ok'],
    [
      'an unknown tool',
      callRecord(0, 0, 'nope', { error: { code: 'tool_not_found', message: 'x' } }),
      'Tool nope does not exist.',
    ],
    [
      'a failed tool',
      callRecord(0, 0, 'clock', { error: { code: 'tool_failed', message: 'down' } }),
      'Tool clock execute failed: down',
    ],
    [
      'a failed delegation without a reason',
      callRecord(0, 0, 'helper', { error: { code: 'subagent_failed', message: ' ' } }, 'subagent'),
      'Sub-agent _subagent_helper execute failed.',
    ],
  ];
  for (const [name, record, text] of rows) t.equal(toolMessage(record), text, name);
});
