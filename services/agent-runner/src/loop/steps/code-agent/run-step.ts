import { type CallRecord, codedError, normalizeResult } from '@agentmesh/shared';
import { nextAttempt } from '../../store/next-attempt.js';
import type { ReplayMemory } from './replay-memory.js';
import { never } from './replay-outcome.js';

/** What a step needs of the replay running it. */
export interface StepHost {
  memory: ReplayMemory;
  runnerId: string;
  /** The run ended meanwhile (its deadline): nothing more is written. */
  isSettled(): boolean;
  /** Writes a record with the memory writes committed with it (our own durable work). */
  write(record: CallRecord, memoryWrites: [key: string, valueJson: string][]): Promise<void>;
}

/**
 * Runs `fn` as the durable step `callId` (`ctx.step`): recorded `started` with the memory writes made
 * before it, then with its outcome (the JSON result, or its error as `agent_failed`) and the writes
 * made while it ran, so a replay answers it from the record and skips `fn`. `prev`: its record
 * left `started` by a crash, when this runs it again.
 */
export async function runStep<T>(
  host: StepHost,
  callId: string,
  label: string,
  fn: () => Promise<T> | T,
  prev?: CallRecord,
): Promise<T> {
  const before = host.memory.take();
  const started: CallRecord = {
    v: 1,
    callId,
    kind: 'tool',
    name: label,
    status: 'started',
    startedAt: new Date().toISOString(),
    runner: host.runnerId,
    ...nextAttempt(prev),
    ...(before.length > 0 ? { memory: before } : {}),
  };
  await host.write(started, before);
  const done = async (outcome: Partial<CallRecord>) => {
    if (host.isSettled()) return never<void>();
    const during = host.memory.take();
    const memory = [...before, ...during];
    const finished: CallRecord = {
      ...started,
      ...outcome,
      finishedAt: new Date().toISOString(),
      ...(memory.length > 0 ? { memory } : {}),
      // Where the writes of `fn` begin: a fork that gives this step's result keeps only those before.
      ...(during.length > 0 ? { memoryBefore: before.length } : {}),
    };
    await host.write(finished, during);
  };
  let value: unknown;
  try {
    value = normalizeResult((await fn()) ?? null);
  } catch (e) {
    await done({ status: 'failed', error: codedError('agent_failed', (e as Error)?.message ?? String(e)) });
    throw e;
  }
  await done({ status: 'succeeded', content: JSON.stringify(value) });
  return value as T;
}
