import { stripVTControlCharacters } from 'node:util';

/** An approval a runner asked for, as its `approval requested` log line tells it. */
export interface ApprovalRequestLine {
  agent: string;
  invocationId: string;
  callId: string;
  callable: string;
}

const MESSAGE = 'approval requested';
const FIELDS = ['agent', 'invocationId', 'callId', 'callable'] as const;

/**
 * The approval request a runner's output line reports (log-approval-request.ts), or undefined: a
 * JSON line with that message, or a pretty one (`[time] INFO: approval requested agent=… …`):
 * ids are single tokens, and `callable` comes last, so the rest of the line is its value (quoted
 * as JSON when it holds a space: a code agent's approval name may).
 */
export function approvalRequestOf(line: string): ApprovalRequestLine | undefined {
  let fields: Record<string, unknown> = {};
  if (line.startsWith('{')) {
    try {
      fields = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return undefined;
    }
    if (fields.msg !== MESSAGE) return undefined;
  } else {
    const plain = stripVTControlCharacters(line);
    const at = plain.indexOf(`: ${MESSAGE} `);
    const last = plain.indexOf(' callable=', at);
    if (at < 0 || last < 0) return undefined;
    for (const pair of plain.slice(at + MESSAGE.length + 3, last).split(' ')) {
      const eq = pair.indexOf('=');
      if (eq > 0) fields[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
    const value = plain.slice(last + ' callable='.length);
    try {
      fields.callable = value.startsWith('"') ? JSON.parse(value) : value;
    } catch {
      return undefined;
    }
  }
  if (!FIELDS.every((f) => typeof fields[f] === 'string' && fields[f] !== '')) return undefined;
  const [agent, invocationId, callId, callable] = FIELDS.map((f) => fields[f] as string);
  return { agent: agent!, invocationId: invocationId!, callId: callId!, callable: callable! };
}

/** What npm start prints for a request: who asks, and the two curls that decide it. */
export function approvalNotice(a: ApprovalRequestLine, gatewayUrl: string, withAuth: boolean): string {
  const url = `${gatewayUrl}/invocations/${a.invocationId}/approvals/${a.callId}`;
  const auth = withAuth ? ` -H 'authorization: Bearer <the key that started it>'` : '';
  const curl = (body: string) =>
    `  curl -s -X POST '${url}' -H 'content-type: application/json'${auth} -d '${body}'`;
  return [
    `approval requested: ${a.agent} (${a.invocationId}) waits for a decision on ${a.callable}; approve or reject it with`,
    curl('{"approved": true}'),
    curl('{"approved": false, "reason": "not now"}'),
  ].join('\n');
}
