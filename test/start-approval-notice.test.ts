// npm start turns a runner's `approval requested` line into the curls that decide it (docs/guides/approvals-and-budgets.md):
// read from the lines a runner really writes — pino's JSON, and the pretty ones npm start's
// children write on a terminal.
import { Writable } from 'node:stream';
import { loggerOptions, prettyOptions } from '@agentmesh/shared';
import { pino } from 'pino';
import pretty from 'pino-pretty';
import t from 'tap';
import { approvalNotice, approvalRequestOf } from '../scripts/approval-notice.js';

/** The lines a runner's logger writes for one record, JSON or pretty. */
function linesOf(format: 'json' | 'pretty', fields: object, msg: string): string[] {
  let text = '';
  const sink = new Writable({
    write(chunk, _enc, done) {
      text += String(chunk);
      done();
    },
  });
  const options = loggerOptions('agent-runner', 'info');
  const log =
    format === 'json'
      ? pino(options, sink)
      : pino(options, pretty({ ...prettyOptions(), destination: sink, colorize: true }));
  log.info(fields, msg);
  return text.split('\n').filter(Boolean);
}

// As log-approval-request.ts writes it: `callable` last.
const request = (callable: string) => ({
  agent: 'publisher',
  invocationId: 'inv_0123456789abcdef0123456789abcdef',
  rootId: 'inv_0123456789abcdef0123456789abcdef',
  callId: 't0-call0',
  callable,
});

t.test('an approval request is read from a JSON line and from a pretty, coloured one', async (t) => {
  for (const format of ['json', 'pretty'] as const) {
    for (const callable of ['publish_note', 'deploy to prod "eu"']) {
      const [line] = linesOf(format, request(callable), 'approval requested');
      t.strictSame(
        approvalRequestOf(line!),
        {
          agent: 'publisher',
          invocationId: 'inv_0123456789abcdef0123456789abcdef',
          callId: 't0-call0',
          callable,
        },
        `${format}: ${callable}`,
      );
    }
  }
});

t.test('other lines are not approval requests', async (t) => {
  for (const format of ['json', 'pretty'] as const) {
    const [other] = linesOf(format, { agent: 'a', invocationId: 'inv_x' }, 'invocation started');
    t.equal(approvalRequestOf(other!), undefined, format);
  }
  t.equal(approvalRequestOf('{not json'), undefined);
  t.equal(approvalRequestOf('[12:00:00] INFO: approval requested agent=a'), undefined, 'fields missing');
});

t.test('the notice names who asks and gives the two curls that decide it', async (t) => {
  const a = { agent: 'publisher', invocationId: 'inv_1', callId: 't0-call0', callable: 'publish_note' };
  const url = "'http://127.0.0.1:3000/invocations/inv_1/approvals/t0-call0'";
  t.equal(
    approvalNotice(a, 'http://127.0.0.1:3000', false),
    [
      'approval requested: publisher (inv_1) waits for a decision on publish_note; approve or reject it with',
      `  curl -s -X POST ${url} -H 'content-type: application/json' -d '{"approved": true}'`,
      `  curl -s -X POST ${url} -H 'content-type: application/json' -d '{"approved": false, "reason": "not now"}'`,
    ].join('\n'),
  );
  t.match(approvalNotice(a, 'http://h', true), "-H 'authorization: Bearer <the key that started it>'");
});
