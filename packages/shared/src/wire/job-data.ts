import { type Static, Type } from '@sinclair/typebox';

/** The data of every BullMQ job: which invocation to activate. State itself lives in Redis. */
export const JobData = Type.Object({
  v: Type.Literal(1),
  invocationId: Type.String(),
  rootId: Type.String(),
  agent: Type.String(),
  /** W3C traceparent of the request that started the tree. */
  traceparent: Type.Optional(Type.String()),
});
export type JobData = Static<typeof JobData>;

/** The retry policy of every invocation job, root or child: three attempts, exponential from 500 ms. */
export const JOB_RETRY = { attempts: 3, backoff: { type: 'exponential', delay: 500 } } as const;
