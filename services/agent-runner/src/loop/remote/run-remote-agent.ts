import type { Message, Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { type CallRecord, codedError, isMeshError } from '@agentmesh/shared';
import { DelayedError } from 'bullmq';
import type { AgentRun } from '../steps/agent-run.js';
import { finishFailed, finishSucceeded } from '../steps/finish-invocation.js';
import { timeoutSignal } from '../timeout-signal.js';
import type { RemoteAgents } from './remote-agents.js';
import { RemoteError } from './remote-error.js';
import { remoteMessage } from './remote-message.js';
import { messageOutcome, remoteOutcome, type SettledOutcome } from './remote-outcome.js';
import { retryRemote } from './retry-remote.js';
import { watchRemoteTask } from './watch-remote-task.js';

/** The call id of a remote child's one durable call: its message, recorded with the remote task id. */
export const REMOTE_CALL_ID = 't0-remote';

// How long a parked remote child sleeps before it looks again: a quarter of its age, within these.
// A runner watching it in the background (ParkedWatches) wakes it as soon as the task settles or
// the child is cancelled; the delay is what is left when that runner is gone.
const MIN_PARK_MS = 1000;
const MAX_PARK_MS = 30_000;

/**
 * One activation of a remote agent's child invocation (docs/guides/a2a-and-remote-agents.md): fetches the card when first
 * needed, sends the message once (its id derived from the invocation id) and records the remote
 * task id (as the call's `providerId`) before it waits, so a runner that takes over after a crash
 * watches that task instead of sending again. It watches for a bounded time, then parks (status
 * `waiting`, the job delayed, no worker slot held) and is woken when the task settles (or at the
 * end of the delay); the remote task's end becomes the child's. Cancellation and the deadline
 * cancel the remote task. Every request of the activation ends when its watch does (at most
 * `remote.watchMs`, 5 s by default, never past the deadline), however slowly the remote answers: a slow or silent peer
 * never holds the worker slot longer than that (docs/reference/bounds.md).
 */
export async function runRemoteAgent(run: AgentRun, remote: RemoteAgents): Promise<void> {
  const { ctx, agent, activation, signal } = run;
  const s = activation.state;
  if (Date.now() >= s.deadline) {
    await cancelRemoteTask(run, remote);
    return finishFailed(ctx, activation, codedError('deadline_exceeded'));
  }
  const until = Math.min(s.deadline, Date.now() + remote.watchMs);
  // The requests' own signal: cancellation, or `until` (retryRemote tells the two apart by `signal`).
  const window = timeoutSignal(signal, Math.max(1, until - Date.now()));
  const bounded = window.signal;
  let sentTo: string | undefined; // the task this activation started, recorded or not yet
  try {
    const client = await retryRemote(() => remote.client(agent.name, bounded), until, signal);
    let record = activation.records.get(REMOTE_CALL_ID);
    if (!record?.providerId) {
      const request = remoteMessage(agent, s.id, s.input);
      // The trace goes on on the other mesh (its gateway reads `traceparent`, docs/reference/traces.md).
      const trace = s.traceparent ? { serviceParameters: { traceparent: s.traceparent } } : {};
      const sent = await retryRemote(
        () => client.sendMessage(request, { signal: bounded, ...trace }),
        until,
        signal,
      );
      if (!isTask(sent)) return settle(run, started(run), messageOutcome(agent, sent));
      sentTo = sent.id;
      record = started(run, sent.id);
      await ctx.store.record(activation, record); // refused (cancelled) when the flag is up: caught below
    }
    const taskId = record.providerId!;
    const task = await retryRemote(
      () => watchRemoteTask(client, taskId, until, bounded),
      until,
      signal,
    ).catch((e: unknown) => {
      // The watch's window closed at `until` mid-request (its timer and the watch's own fire
      // together): the task is as pending as when the window closes between requests, and is
      // watched on in the background while the child is parked; before, this parked it as for an
      // unreachable remote, without that watch, so it woke only at the end of its delay.
      if (bounded.aborted && !signal.aborted && Date.now() < s.deadline) return undefined;
      throw e;
    });
    const outcome = task === undefined ? undefined : remoteOutcome(agent, task);
    if (outcome === undefined || outcome.kind === 'pending') return park(run, remote, { client, taskId });
    return settle(run, record, outcome);
  } catch (e) {
    if (isMeshError(e, 'cancelled')) {
      await cancelRemoteTask(run, remote, sentTo);
      throw e;
    }
    if (!(e instanceof RemoteError)) throw e;
    // The exchange ran out of time because the deadline passed (a loaded machine, a slow remote):
    // that is this child's deadline, not the remote agent's failure, and its task must not run on.
    if (Date.now() >= s.deadline) {
      await cancelRemoteTask(run, remote, sentTo);
      return finishFailed(ctx, activation, codedError('deadline_exceeded'));
    }
    if (e.transient) return park(run, remote); // unreachable for now: the remote mesh may start later
    const error = codedError('subagent_failed', `remote agent ${agent.name}: ${e.message}`);
    return finishFailed(ctx, activation, error);
  } finally {
    window.clear();
  }
}

/**
 * Cancels the remote task of a child that is being cancelled or ran past its deadline (best
 * effort, bounded: the child ends either way): the recorded one, or `sentTo`, one this activation
 * started but could not record (the cancel flag went up in between). None before a message.
 */
export async function cancelRemoteTask(
  run: Pick<AgentRun, 'ctx' | 'agent' | 'activation'>,
  remote: RemoteAgents,
  sentTo?: string,
) {
  const { ctx, agent, activation } = run;
  const recorded = activation.records.get(REMOTE_CALL_ID);
  const taskId = recorded?.status === 'started' ? recorded.providerId : sentTo;
  if (!taskId) return;
  const signal = AbortSignal.timeout(5000);
  try {
    const client: Client = await remote.client(agent.name, signal);
    await client.cancelTask({ tenant: '', id: taskId, metadata: undefined }, { signal });
  } catch (e) {
    // A task that ended meanwhile cannot be cancelled: that is fine too.
    ctx.log.warn(
      { invocationId: activation.state.id, taskId, err: (e as Error).message },
      'remote task not cancelled',
    );
  }
}

function isTask(sent: Message | Task): sent is Task {
  return 'status' in sent && typeof (sent as Task).id === 'string';
}

function started(run: AgentRun, taskId?: string): CallRecord {
  return {
    v: 1,
    callId: REMOTE_CALL_ID,
    kind: 'subagent',
    name: run.agent.name,
    status: 'started',
    startedAt: new Date().toISOString(),
    runner: run.ctx.runnerId,
    ...(taskId !== undefined ? { providerId: taskId } : {}),
  };
}

/** Ends the child with the remote outcome; the call's record goes out in the same round trip. */
async function settle(run: AgentRun, record: CallRecord, outcome: SettledOutcome) {
  const { ctx, agent, activation } = run;
  const finished: CallRecord = {
    ...record,
    status: outcome.kind,
    finishedAt: new Date().toISOString(),
    ...(outcome.kind === 'failed' ? { error: outcome.error } : {}),
  };
  await ctx.store.record(activation, finished, undefined, undefined, [], { defer: true });
  if (outcome.kind === 'succeeded') return finishSucceeded(ctx, agent, activation, outcome.output);
  return finishFailed(ctx, activation, outcome.error);
}

/**
 * Releases the worker slot until the next look: the invocation is marked `waiting` (so the next
 * activation is no recovery) and its job delayed, never past the deadline (which then ends it).
 */
async function park(
  run: AgentRun,
  remote: RemoteAgents,
  watching?: { client: Client; taskId: string },
): Promise<never> {
  const { ctx, activation, job, token } = run;
  const s = activation.state;
  const age = Date.now() - s.createdAt;
  const delay = Math.max(1, Math.min(MAX_PARK_MS, Math.max(MIN_PARK_MS, age / 4), s.deadline - Date.now()));
  const wakeAt = Date.now() + Math.ceil(delay);
  await ctx.store.park(activation);
  await job.moveToDelayed(wakeAt, token);
  if (watching) remote.parked?.watch(job, s.id, watching.client, watching.taskId, wakeAt);
  throw new DelayedError();
}
