import { type Static, Type } from '@sinclair/typebox';
import { ChatMessage } from '../react/chat-message.js';
import { CallKind, CallStatus, CodedError } from './invocation-view.js';

/** The longest text a call detail shows of one string, in UTF-8 bytes (docs/guides/console.md). */
export const CALL_DETAIL_MAX_TEXT_BYTES = 256 * 1024;

/** What `GET /invocations/{id}/calls/{callId}` answers: one durable call with its content (docs/guides/console.md). */
export const CallDetail = Type.Object(
  {
    callId: Type.String(),
    kind: CallKind,
    name: Type.String({ description: 'The model entry, the tool, or the sub-agent.' }),
    status: CallStatus,
    attempt: Type.Integer({
      minimum: 1,
      description: 'How many times the call was started: 2 and more when it was re-run after a crash.',
    }),
    startedAt: Type.Optional(Type.String({ format: 'date-time' })),
    finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
    runner: Type.Optional(Type.String()),
    request: Type.Object(
      {
        messages: Type.Optional(
          Type.Array(ChatMessage, { description: 'A model call: the messages it was sent.' }),
        ),
        arguments: Type.Optional(
          Type.Unknown({
            description:
              'A tool call or delegation: the arguments the model wrote, parsed (the raw text when it is ' +
              "not JSON); a code agent's approval: its payload.",
          }),
        ),
        input: Type.Optional(Type.Unknown({ description: "A delegation: the child invocation's input." })),
        childId: Type.Optional(Type.String({ description: 'A delegation: the child invocation.' })),
      },
      { description: 'What the call was asked.' },
    ),
    result: Type.Optional(
      Type.Object(
        {
          content: Type.Optional(
            Type.Union([Type.String(), Type.Null()], {
              description:
                "A model call: the reply's text; a tool call or delegation: the tool message the model " +
                'received (a rejected call: the rejection).',
            }),
          ),
          toolCalls: Type.Optional(
            Type.Array(Type.Object({ id: Type.String(), name: Type.String(), arguments: Type.String() }), {
              description: 'A model call: the tool calls of its reply, arguments as written.',
            }),
          ),
          output: Type.Optional(Type.Unknown({ description: "A delegation: the child's output." })),
        },
        { description: 'What the call gave, once it has an outcome.' },
      ),
    ),
    error: Type.Optional(CodedError),
    usage: Type.Optional(
      Type.Object(
        { promptTokens: Type.Integer(), completionTokens: Type.Integer() },
        { description: 'A model call: its tokens.' },
      ),
    ),
    decision: Type.Optional(
      Type.Object(
        { approved: Type.Boolean(), reason: Type.Optional(Type.String()), decidedAt: Type.String() },
        { description: 'A call that needed approval: the decision, once taken.' },
      ),
    ),
    note: Type.Optional(Type.String({ description: 'Why part of the content cannot be shown.' })),
    truncated: Type.Optional(
      Type.Literal(true, { description: 'Some text was longer than 256 KiB and is cut there.' }),
    ),
  },
  {
    title: 'CallDetail',
    description:
      'One durable call of an invocation with what it was asked and what it gave, from the records: ' +
      "a model call's messages and reply, a tool call's arguments and result, a delegation's input and output.",
  },
);
export type CallDetail = Static<typeof CallDetail>;
