// forkEvents (docs/guides/durability.md): a fork's stream starts with its reused calls, marked, then the given
// result, then its `queued` status.
import t from 'tap';
import { forkEvents } from '../src/fork/fork-events.js';
import type { CallRecord } from '../src/wire/call-record.js';

const base = { v: 1 as const, status: 'succeeded' as const, startedAt: 's', finishedAt: 'f' };
const reused: CallRecord[] = [
  {
    ...base,
    callId: 't0-model',
    kind: 'model',
    name: 'default',
    reply: {
      content: 'thinking',
      toolCalls: [
        { id: 'a', name: 'lookup', arguments: '{}' },
        { id: 'b', name: '_subagent_helper', arguments: '{}' },
      ],
      usage: { promptTokens: 1, completionTokens: 1 },
    },
    reused: true,
  },
  {
    ...base,
    callId: 't0-call0',
    kind: 'tool',
    name: 'lookup',
    status: 'failed',
    error: { code: 'tool_failed', message: 'x' },
    reused: true,
  },
  { ...base, callId: 't0-call1', kind: 'subagent', name: 'helper', childId: 'inv_c-1', reused: true },
  { ...base, callId: 't1-model', kind: 'model', name: 'default', reused: true },
];

t.test(
  'reused calls come first, as their runs announced them, then the given result and queued',
  async (t) => {
    const given: CallRecord = {
      ...base,
      callId: 't1-call0',
      kind: 'subagent',
      name: 'helper',
      resultGiven: true,
    };
    const events = forkEvents({ id: 'inv_f', agent: 'lead' }, { reused, given }, Date.UTC(2030, 0, 1)).map(
      (e) => JSON.parse(e),
    );
    t.same(
      events.map((e) => [e.invocationId, e.agent, e.type]),
      [
        ['inv_f', 'lead', 'model_call'],
        ['inv_f', 'lead', 'tool_call'],
        ['inv_f', 'lead', 'delegation_started'],
        ['inv_f', 'lead', 'delegation_finished'],
        ['inv_f', 'lead', 'model_call'],
        ['inv_f', 'lead', 'delegation_finished'],
        ['inv_f', 'lead', 'status'],
      ],
    );
    t.same(events[0].data, {
      callId: 't0-model',
      turn: 0,
      content: 'thinking',
      toolCalls: ['lookup', '_subagent_helper'],
      reused: true,
    });
    t.same(events[1].data, {
      callId: 't0-call0',
      name: 'lookup',
      status: 'failed',
      error: { code: 'tool_failed', message: 'x' },
      reused: true,
    });
    t.same(events[3].data, {
      callId: 't0-call1',
      subagent: 'helper',
      childId: 'inv_c-1',
      status: 'succeeded',
      reused: true,
    });
    t.equal(events[4].data.turn, 1);
    t.same(events[5].data, {
      callId: 't1-call0',
      subagent: 'helper',
      status: 'succeeded',
      resultGiven: true,
    });
    t.same(events[6].data, { status: 'queued' });
    t.equal(events[0].at, '2030-01-01T00:00:00.000Z');
    t.notOk(events[0].parentId, 'a fork is a root');
  },
);
