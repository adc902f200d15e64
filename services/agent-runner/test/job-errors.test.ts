// settleJobError: what BullMQ (and a parent reading a child job's failedReason) learns of a failed
// activation. A system fault's own words go to the log only (issue 7, defect 8): logSystemFault.
import { type Logger, MeshError } from '@agentmesh/shared';
import { type Job, UnrecoverableError, WaitingChildrenError } from 'bullmq';
import t from 'tap';
import { logSystemFault, settleJobError } from '../src/loop/job-errors.js';

const job = { id: 'j1', data: { v: 1, invocationId: 'inv_1' } } as unknown as Job;
const thrown = async (e: unknown): Promise<unknown> => {
  try {
    await settleJobError(e, job, 'token');
  } catch (settled) {
    return settled;
  }
  throw new Error('expected settleJobError to throw');
};

const logging = () => {
  const logged: unknown[] = [];
  const log: Logger = { info() {}, debug() {}, warn() {}, error: (obj) => void logged.push(obj) };
  return { log, logged };
};

t.test('a Redis error is rethrown in our words, and its detail is logged', async (t) => {
  const fault = new Error('connect ECONNREFUSED 10.0.0.7:6379');
  const settled = (await thrown(fault)) as Error;
  t.equal(settled.name, 'SystemFaultError');
  t.equal(settled.message, 'The runner hit a system fault (logged by the runner); the job is retried.');
  const { log, logged } = logging();
  logSystemFault(fault, job, log);
  t.match(logged, [{ jobId: 'j1', invocationId: 'inv_1', err: 'connect ECONNREFUSED 10.0.0.7:6379' }]);
});

t.test("BullMQ's control errors and mesh errors pass unchanged, and are not logged", async (t) => {
  const { log, logged } = logging();
  for (const e of [
    new WaitingChildrenError(),
    new UnrecoverableError('bad data'),
    new MeshError('cancelled'),
  ]) {
    t.equal(await thrown(e), e, e.name);
    logSystemFault(e, job, log);
  }
  t.same(logged, []);
});
