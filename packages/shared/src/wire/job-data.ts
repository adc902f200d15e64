import { type Static, Type } from '@sinclair/typebox';

/** The data of every BullMQ job: which invocation to activate. State itself lives in Redis. */
export const JobData = Type.Object({
  v: Type.Literal(1),
  invocationId: Type.String(),
  rootId: Type.String(),
  agent: Type.String(),
  /**
   * W3C traceparent of the span that started the invocation: the gateway's HTTP span (or the
   * client's, tracing off) for a root, the delegating activation for a child. Its `invoke_agent`
   * span hangs under it (see invocationContext).
   */
  traceparent: Type.Optional(Type.String()),
});
export type JobData = Static<typeof JobData>;

/** The retry policy of every invocation job, root or child: three attempts, exponential from 500 ms. */
export const JOB_RETRY = { attempts: 3, backoff: { type: 'exponential', delay: 500 } } as const;
