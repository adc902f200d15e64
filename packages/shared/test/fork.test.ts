// Forking an invocation (src/fork/, docs/guides/durability.md): which records a fork reuses and the
// events its stream starts with.

import t from 'tap';
import { isMeshError } from '../src/errors/mesh-error.js';
import { forkEvents } from '../src/fork/fork-events.js';
import { planFork } from '../src/fork/plan-fork.js';
import type { CallRecord } from '../src/wire/call-record.js';

t.test('forkEvents', async (t) => {
  // forkEvents (docs/guides/durability.md): a fork's stream starts with its reused calls, marked, then the given
  // result, then its `queued` status.

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
});

t.test('planFork', async (t) => {
  // planFork (docs/guides/durability.md): which records a fork reuses, how a given result is recorded, and each
  // refusal, from the records alone.

  const now = '2030-01-01T00:00:00.000Z';
  const rec = (callId: string, kind: CallRecord['kind'], extra: Partial<CallRecord> = {}): CallRecord => ({
    v: 1,
    callId,
    kind,
    name: kind === 'model' ? 'default' : kind === 'tool' ? 'lookup' : 'helper',
    status: 'succeeded',
    startedAt: `${callId}-start`,
    finishedAt: `${callId}-end`,
    ...extra,
  });
  // In call order as the store hands them over (decodeCalls sorts): turn 0, then turn 1.
  const REACT = [
    rec('t0-model', 'model'),
    rec('t0-call0', 'tool', { content: 'a', providerId: 'p0' }),
    rec('t0-call1', 'subagent', { childId: 'inv_x-1', content: 'h', providerId: 'p1' }),
    rec('t0-call2', 'tool', { content: 'c' }),
    rec('t1-model', 'model'),
  ];

  const refusal = (fn: () => unknown): string | undefined => {
    try {
      fn();
    } catch (e) {
      return isMeshError(e) ? e.code : String(e);
    }
    return undefined;
  };

  t.test('the calls before the point are reused in call order, marked, with their own timings', async (t) => {
    const { reused, given } = planFork(REACT, { fromCallId: 't0-call2' }, { code: false, now });
    t.same(
      reused.map((r) => [r.callId, r.reused, r.startedAt]),
      [
        ['t0-model', true, 't0-model-start'],
        ['t0-call0', true, 't0-call0-start'],
        ['t0-call1', true, 't0-call1-start'],
      ],
    );
    t.equal(reused[2]!.childId, 'inv_x-1', 'a delegation keeps its child');
    t.equal(given, undefined);
    t.notOk('reused' in REACT[0]!, 'the records read are not changed');
    t.same(
      planFork(REACT, { fromCallId: 't0-model' }, { code: false, now }).reused,
      [],
      'a fork at the first call reuses nothing',
    );
  });

  t.test('a given result is recorded succeeded at the fork time, as the model reads it', async (t) => {
    const { reused, given } = planFork(
      REACT,
      { fromCallId: 't0-call1', result: { value: { n: 1 } } },
      { code: false, now },
    );
    t.equal(reused.length, 2);
    t.same(given, {
      v: 1,
      callId: 't0-call1',
      kind: 'subagent',
      name: 'helper',
      status: 'succeeded',
      startedAt: now,
      finishedAt: now,
      resultGiven: true,
      providerId: 'p1',
      content: '{"n":1}',
    });
    t.equal(
      planFork(REACT, { fromCallId: 't0-call0', result: { value: 'as is' } }, { code: false, now }).given
        ?.content,
      'as is',
    );
    t.equal(
      planFork(REACT, { fromCallId: 't0-call0', result: { value: null } }, { code: false, now }).given
        ?.content,
      'null',
    );
  });

  t.test(
    "a code agent's given result is JSON for a step, an output for a delegation, with the writes before it",
    async (t) => {
      const code = [
        rec('t0-call0', 'tool', {
          name: 'step:a',
          content: '"x"',
          memory: [
            ['before', '1'],
            ['inside', '2'],
          ],
          memoryBefore: 1,
        }),
        rec('t0-call1', 'subagent', { childId: 'inv_x-2', memory: [['m', '3']] }),
      ];
      const step = planFork(code, { fromCallId: 't0-call0', result: { value: 'G' } }, { code: true, now })
        .given!;
      t.equal(step.content, '"G"');
      t.same(step.memory, [['before', '1']], "the step's own writes are dropped");
      const child = planFork(code, { fromCallId: 't0-call1', result: { value: 'text' } }, { code: true, now })
        .given!;
      t.same([child.outputJson, child.content, child.memory], ['"text"', 'text', [['m', '3']]]);
      t.equal(child.childId, undefined);
    },
  );

  t.test('each refusal has its code', async (t) => {
    t.equal(
      refusal(() => planFork(REACT, { fromCallId: 't9-model' }, { code: false, now })),
      'call_not_found',
    );
    t.equal(
      refusal(() => planFork(REACT, { fromCallId: 't1-model', result: { value: 1 } }, { code: false, now })),
      'invalid_input',
      'a model call has no result to give',
    );
    const approval = [
      rec('t0-call0', 'tool', { name: 'approval:deploy', status: 'approved' }),
      rec('t0-call1', 'tool'),
    ];
    t.equal(
      refusal(() =>
        planFork(approval, { fromCallId: 't0-call0', result: { value: 1 } }, { code: true, now }),
      ),
      'invalid_input',
      "nor a code agent's approval",
    );
    t.equal(
      planFork(approval, { fromCallId: 't0-call1' }, { code: true, now }).reused.length,
      1,
      'approved is its outcome',
    );
    t.equal(
      refusal(() => planFork(approval, { fromCallId: 't0-call1' }, { code: false, now })),
      'call_not_recorded',
      'a ReAct call approved and not yet run is not',
    );
    for (const status of ['started', 'awaiting_approval'] as const) {
      const open = [rec('t0-model', 'model'), rec('t0-call0', 'tool', { status }), rec('t0-call1', 'tool')];
      t.equal(
        refusal(() => planFork(open, { fromCallId: 't0-call1' }, { code: false, now })),
        'call_not_recorded',
        `${status} before`,
      );
      t.equal(
        refusal(() => planFork(open, { fromCallId: 't0-call0' }, { code: false, now })),
        'call_not_recorded',
        `${status} at`,
      );
      t.equal(
        planFork(open, { fromCallId: 't0-call0', result: { value: 1 } }, { code: false, now }).given?.status,
        'succeeded',
        `${status} at the point, with a result`,
      );
    }
    for (const status of ['failed', 'rejected', 'cancelled'] as const) {
      const done = [rec('t0-call0', 'tool', { status }), rec('t0-call1', 'tool')];
      t.equal(
        planFork(done, { fromCallId: 't0-call1' }, { code: false, now }).reused[0]!.status,
        status,
        `${status} is reused`,
      );
    }
  });

  t.test('a given result reaches the model cut at MESH_MAX_RESULT_BYTES, as any result', async (t) => {
    const opts = { code: false, now, maxResultBytes: 256 };
    const long = planFork(REACT, { fromCallId: 't0-call0', result: { value: 'x'.repeat(1000) } }, opts)
      .given!;
    t.ok(Buffer.byteLength(long.content!, 'utf8') <= 256);
    t.match(long.content, /…\[truncated: 1000 bytes total, showing the first \d+\]$/);
    const step = [rec('t0-call0', 'tool', { name: 'step:a' })];
    const whole = planFork(
      step,
      { fromCallId: 't0-call0', result: { value: 'y'.repeat(1000) } },
      { ...opts, code: true },
    );
    t.equal(
      whole.given!.content,
      JSON.stringify('y'.repeat(1000)),
      "a code agent's step result stays JSON, whole",
    );
  });
});
